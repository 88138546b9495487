package io.github.dblock.core;

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

	OwnerIds() {
		String host;
		try {
			host = InetAddress.getLocalHost().getHostName();
		}
		catch (UnknownHostException ex) {
			host = "unknown-host";
		}
		if (host.length() > 64) {
			host = host.substring(0, 64);
		}
		this.instance = host + "/" + ProcessHandle.current().pid() + "/"
				+ HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextInt());
	}

	String next() {
		return this.instance + "#" + Long.toString(this.counter.incrementAndGet(), 36);
	}

}
