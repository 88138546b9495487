package io.github.dblock.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

/**
 * The CPU time the database server's processes used, read from {@code /proc} on Linux when
 * the server runs on this machine ({@code mariadbd}/{@code mysqld}, or {@code postgres} and
 * its backends); otherwise unavailable. Every process of that name on this machine counts
 * (another server of the same kind would too). Backends that ended between two reads drop
 * out of the second, so the difference of two reads is a lower bound; each process's time
 * moves in ticks of 10 ms.
 */
final class ServerCpu {

	/** Clock ticks per second of {@code /proc/<pid>/stat}'s times. */
	private static final long TICKS_PER_SECOND = 100;

	private final String[] commands;

	/** Whether a read found a process of the server. */
	private volatile boolean found;

	private ServerCpu(String... commands) {
		this.commands = commands;
	}

	/** The server of a JDBC URL, when it names this machine; else one that is never available. */
	static ServerCpu of(String url) {
		boolean local = url.contains("//127.0.0.1") || url.contains("//localhost");
		if (!local || !Files.isDirectory(Path.of("/proc/self"))) {
			return new ServerCpu();
		}
		return url.startsWith("jdbc:postgresql:") ? new ServerCpu("postgres") : new ServerCpu("mariadbd", "mysqld");
	}

	boolean available() {
		return this.commands.length > 0;
	}

	/** Whether the last read found a process of the server (else its CPU is unknown, not 0). */
	boolean found() {
		return this.found;
	}

	/** The server's processes' user and system time so far, in nanoseconds; 0 when unavailable. */
	long nanos() {
		if (!available()) {
			return 0;
		}
		long ticks = 0;
		boolean any = false;
		try (Stream<Path> processes = Files.list(Path.of("/proc"))) {
			for (Path process : (Iterable<Path>) processes.filter((p) -> p.getFileName().toString().matches("\\d+"))::iterator) {
				long used = ticks(process);
				any |= used >= 0;
				ticks += Math.max(0, used);
			}
		}
		catch (IOException ex) {
			return 0;
		}
		this.found = any;
		return ticks * (1_000_000_000L / TICKS_PER_SECOND);
	}

	/** A process's ticks if it is one of the server's, else -1. */
	private long ticks(Path process) {
		try {
			String command = Files.readString(process.resolve("comm")).trim();
			for (String wanted : this.commands) {
				if (command.equals(wanted)) {
					String stat = Files.readString(process.resolve("stat"));
					String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
					// after the command: state is field 0, utime field 11, stime field 12
					return Long.parseLong(fields[11]) + Long.parseLong(fields[12]);
				}
			}
		}
		catch (IOException | RuntimeException ex) {
			// the process ended meanwhile
		}
		return -1;
	}

}
