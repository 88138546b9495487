package io.github.dblock.testsupport;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Assumptions;

/**
 * Hosts of a test's own on this machine: each a network namespace ({@code ip netns}) joined
 * to this one by a veth pair, host end {@code 10.231.<m>.1}, namespace end
 * {@code 10.231.<m>.2} (where {@code m} is {@code 10 * slot + n + 1}, the slot the first
 * of up to ten runs at once that is free); a process started through {@link #prefix(int)} runs in it and
 * reaches a server of the test's that listens on {@link #hostAddress(int)}. A partition is
 * real: {@code nft} rules in the namespace drop the packets, silently, to the server, from it
 * or both, so that the TCP connections stay open and the client learns nothing until its
 * timeouts. Needs root, {@code ip} and {@code nft} (Debian's iproute2 and nftables; the test
 * is skipped without them, {@code .ci/run} installs them). Closing deletes the namespaces
 * and their veth pairs.
 */
public final class NetworkNamespaces implements AutoCloseable {

	/** The direction of a partition. */
	public enum Cut {

		/** Packets to the server are dropped: no statement arrives. */
		TO_SERVER,

		/** Packets from the server are dropped: statements run and commit, their replies are lost. */
		FROM_SERVER,

		/** Both. */
		BOTH

	}

	/** How many runs may make namespaces at once, each in a slot of its own. */
	private static final int SLOTS = 10;

	private final int slot;

	private final int count;

	private NetworkNamespaces(int slot, int count) {
		this.slot = slot;
		this.count = count;
	}

	/**
	 * Creates {@code count} namespaces in the first slot that no other run holds (a run holds
	 * its slot by its first namespace, which the creation of another fails on).
	 * @param count how many (at most 9)
	 * @return the namespaces, each with its veth pair up and no rule
	 * @throws Exception if one cannot be made
	 */
	public static NetworkNamespaces create(int count) throws Exception {
		Assumptions.assumeTrue("root".equals(System.getProperty("user.name")) && works("ip", "netns", "list")
				&& works("nft", "--version"), "network namespaces need root, ip (iproute2) and nft (nftables)");
		NetworkNamespaces namespaces = null;
		for (int slot = 0; slot < SLOTS && namespaces == null; slot++) {
			if (works("ip", "netns", "add", "dblc" + slot + "0")) {
				namespaces = new NetworkNamespaces(slot, count);
			}
		}
		if (namespaces == null) {
			throw new IllegalStateException("every slot of network namespaces is taken: ip netns del dblc<slot><n>");
		}
		try {
			for (int n = 0; n < count; n++) {
				String ns = namespaces.name(n);
				if (n > 0) {
					run("ip", "netns", "add", ns);
				}
				run("ip", "link", "add", ns + "h", "type", "veth", "peer", "name", ns + "n");
				run("ip", "link", "set", ns + "n", "netns", ns);
				run("ip", "addr", "add", namespaces.hostAddress(n) + "/24", "dev", ns + "h");
				run("ip", "link", "set", ns + "h", "up");
				run("ip", "netns", "exec", ns, "ip", "addr", "add", namespaces.clientAddress(n) + "/24", "dev", ns + "n");
				run("ip", "netns", "exec", ns, "ip", "link", "set", ns + "n", "up");
				run("ip", "netns", "exec", ns, "ip", "link", "set", "lo", "up");
				run("ip", "netns", "exec", ns, "nft", "add table inet campaign; "
						+ "add chain inet campaign out { type filter hook output priority 0 ; } ; "
						+ "add chain inet campaign in { type filter hook input priority 0 ; }");
			}
		}
		catch (Exception ex) {
			namespaces.deleteAll();
			throw ex;
		}
		return namespaces;
	}

	/** The address of this machine at the host end of namespace {@code n}'s veth pair. */
	public String hostAddress(int n) {
		return "10.231." + (10 * this.slot + n + 1) + ".1";
	}

	/** The address of namespace {@code n}'s end of its veth pair. */
	public String clientAddress(int n) {
		return "10.231." + (10 * this.slot + n + 1) + ".2";
	}

	/** The host addresses of all namespaces, for a server to listen on. */
	public List<String> hostAddresses() {
		List<String> addresses = new ArrayList<>();
		for (int n = 0; n < this.count; n++) {
			addresses.add(hostAddress(n));
		}
		return addresses;
	}

	/** The command prefix that runs a program in namespace {@code n}. */
	public List<String> prefix(int n) {
		return List.of("ip", "netns", "exec", name(n));
	}

	/**
	 * Cuts namespace {@code n} from this machine in one direction or both, until
	 * {@link #heal(int)}.
	 */
	public void cut(int n, Cut cut) throws Exception {
		String ns = name(n);
		if (cut != Cut.FROM_SERVER) {
			run("ip", "netns", "exec", ns, "nft", "add", "rule", "inet", "campaign", "out", "ip", "daddr", hostAddress(n),
					"counter", "drop");
		}
		if (cut != Cut.TO_SERVER) {
			run("ip", "netns", "exec", ns, "nft", "add", "rule", "inet", "campaign", "in", "ip", "saddr", hostAddress(n),
					"counter", "drop");
		}
	}

	/**
	 * Lets namespace {@code n}'s packets flow again, both ways.
	 * @return how many packets the cut dropped (0 if there was none)
	 */
	public long heal(int n) throws Exception {
		String ns = name(n);
		long dropped = 0;
		Matcher packets = Pattern.compile("packets (\\d+)")
			.matcher(run("ip", "netns", "exec", ns, "nft", "list", "table", "inet", "campaign"));
		while (packets.find()) {
			dropped += Long.parseLong(packets.group(1));
		}
		run("ip", "netns", "exec", ns, "nft", "flush chain inet campaign out; flush chain inet campaign in");
		return dropped;
	}

	@Override
	public void close() throws Exception {
		deleteAll();
	}

	private String name(int n) {
		return "dblc" + this.slot + n;
	}

	private void deleteAll() throws Exception {
		// the first last: it holds the slot
		for (int n = this.count - 1; n >= 0; n--) {
			String ns = name(n);
			if (works("ip", "netns", "pids", ns)) {
				run("ip", "netns", "del", ns);
			}
			// its veth pair goes with the namespace, a moment later; what is left goes now
			works("ip", "link", "del", ns + "h");
		}
	}

	private static boolean works(String... command) {
		try {
			Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
			process.getInputStream().readAllBytes();
			return process.waitFor(10, TimeUnit.SECONDS) && process.exitValue() == 0;
		}
		catch (IOException ex) {
			return false;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return false;
		}
	}

	private static String run(String... command) throws Exception {
		Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
		String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
		if (!process.waitFor(10, TimeUnit.SECONDS) || process.exitValue() != 0) {
			process.destroyForcibly();
			throw new IllegalStateException(String.join(" ", command) + " failed: " + output);
		}
		return output;
	}

}
