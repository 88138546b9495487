package io.github.dblock.engine;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.HexFormat;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Owner ids: a fresh one per acquisition, readable in the lock table (host, process, a
 * random instance id, a counter), never a thread id, which pools and virtual threads reuse.
 */
final class OwnerIds {

	private final String instance;

	private final AtomicLong counter = new AtomicLong();

	/** The host's name, looked up once per JVM (a lookup may be slow). */
	private static final String HOST = host();

	OwnerIds() {
		// one instance id per engine's mode, so that engines of one JVM never share an owner id
		this.instance = HOST + "/" + ProcessHandle.current().pid() + "/"
				+ HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextInt());
	}

	private static String host() {
		String host;
		try {
			host = InetAddress.getLocalHost().getHostName();
		}
		catch (UnknownHostException ex) {
			host = "unknown-host";
		}
		return (host.length() > 64) ? host.substring(0, 64) : host;
	}

	String next() {
		return this.instance + "#" + Long.toString(this.counter.incrementAndGet(), 36);
	}

}
