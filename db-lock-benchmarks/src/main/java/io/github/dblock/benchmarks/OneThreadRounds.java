package io.github.dblock.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;

/**
 * What the one-thread side-by-side measurements share ({@link GuardCost},
 * {@link BeyondOneHolderCost}): the databases and settings from the environment, a small
 * pool per database, and variants of a cycle measured in alternating rounds, so that the
 * machine's load falls on each alike.
 * <p>
 * {@code DB_LOCK_BENCH_MARIADB_URL} (default the local MariaDB's {@code test}),
 * {@code DB_LOCK_BENCH_POSTGRESQL_URL} (the local PostgreSQL's {@code test}; an empty value
 * skips a database), users {@code root} and {@code postgres}, empty passwords;
 * {@code DB_LOCK_BENCH_ROUNDS} (5) rounds of {@code DB_LOCK_BENCH_MEASURE_SECONDS} (5, split
 * over the rounds) per variant.
 */
final class OneThreadRounds {

	private final int rounds;

	private final Duration measure;

	private OneThreadRounds(int rounds, Duration measure) {
		this.rounds = rounds;
		this.measure = measure;
	}

	/** The rounds the environment asks for. */
	static OneThreadRounds fromEnvironment() {
		Map<String, String> env = System.getenv();
		return new OneThreadRounds(Integer.parseInt(env.getOrDefault("DB_LOCK_BENCH_ROUNDS", "5")),
				Duration.ofMillis((long) (Double.parseDouble(env.getOrDefault("DB_LOCK_BENCH_MEASURE_SECONDS", "5")) * 1000)));
	}

	/** The databases to measure: name, JDBC URL, user; those whose URL is empty left out. */
	static List<String[]> databases() {
		Map<String, String> env = System.getenv();
		List<String[]> databases = new ArrayList<>();
		String mariadb = env.getOrDefault("DB_LOCK_BENCH_MARIADB_URL", "jdbc:mariadb://127.0.0.1:3306/test");
		String postgresql = env.getOrDefault("DB_LOCK_BENCH_POSTGRESQL_URL", "jdbc:postgresql://127.0.0.1:5432/test");
		if (!mariadb.isEmpty()) {
			databases.add(new String[] { "MariaDB", mariadb, "root" });
		}
		if (!postgresql.isEmpty()) {
			databases.add(new String[] { "PostgreSQL", postgresql, "postgres" });
		}
		return databases;
	}

	/** A pool of four connections. */
	static HikariDataSource dataSource(String url, String user) {
		HikariConfig config = new HikariConfig();
		config.setJdbcUrl(url);
		config.setUsername(user);
		config.setPassword("");
		config.setMaximumPoolSize(4);
		return new HikariDataSource(config);
	}

	/** The rounds and their length, for the report's header. */
	String describe() {
		return this.rounds + " rounds of " + this.measure.dividedBy(this.rounds).toMillis()
				+ " ms per variant, alternating";
	}

	/** Warms each variant up, then measures them in alternating rounds. */
	void measure(List<Variant> variants) throws Exception {
		for (Variant variant : variants) {
			variant.round(Duration.ofMillis(1500), null);
		}
		Duration round = this.measure.dividedBy(this.rounds);
		for (int i = 0; i < this.rounds; i++) {
			for (Variant variant : variants) {
				List<Long> latencies = new ArrayList<>();
				variant.rates.add(variant.round(round, latencies));
				variant.latencies.addAll(latencies);
			}
		}
	}

	/**
	 * A report's rows of one database: each variant's median cycles per second, p50, and its
	 * ratios to the second variant (the lease cycle) and to the first (raw), with the TCP
	 * segments a cycle if asked.
	 */
	static String rows(String database, List<Variant> variants, boolean segments) {
		double raw = variants.get(0).median();
		double lease = variants.get(1).median();
		StringBuilder rows = new StringBuilder();
		for (Variant variant : variants) {
			rows.append("| ").append(database).append(" | ").append(variant.name).append(" | ")
				.append(String.format("%.0f", variant.median())).append(" | ")
				.append(String.format("%.2f", variant.p50Millis())).append(" | ")
				.append(String.format("%.2fx", variant.median() / lease)).append(" | ")
				.append(String.format("%.2fx", variant.median() / raw)).append(" |");
			if (segments) {
				rows.append(' ').append(String.format("%.1f", variant.segmentsPerCycle())).append(" |");
			}
			rows.append('\n');
		}
		return rows.toString();
	}

	/** One database's rows of a report, measured with these rounds. */
	@FunctionalInterface
	interface Measure {

		String rows(String database, String url, String user, OneThreadRounds rounds) throws Exception;

	}

	/**
	 * Measures every database of the environment and writes their report: its title, what it
	 * measures, the machine's load, the table of each database's rows and the command.
	 * @param args the main method's arguments: the results directory
	 * @param title the report's title
	 * @param description what is measured, one or more sentences
	 * @param columns the table's header row, with its separator row
	 * @param main the measurement's main class, for the command
	 * @param file the report's file name
	 * @param measure the rows of one database
	 */
	static void report(String[] args, String title, String description, String columns, Class<?> main, String file,
			Measure measure) throws Exception {
		OneThreadRounds rounds = fromEnvironment();
		StringBuilder report = new StringBuilder("# ").append(title).append("\n\n")
			.append(description).append(' ')
			.append(rounds.describe()).append(". Run ").append(Instant.now()).append(", load average ")
			.append(loadAverage()).append(".\n\n")
			.append(columns);
		for (String[] database : databases()) {
			report.append(measure.rows(database[0], database[1], database[2], rounds));
		}
		report.append("\nThe command: `./mvnw -pl db-lock-benchmarks -am verify -Pbench -DskipTests ")
			.append("-Dbench.main=").append(main.getName()).append("`.\n");
		write(args, file, report);
	}

	/** Writes a report to the results directory and prints it. */
	static void write(String[] args, String file, CharSequence report) throws IOException {
		Path results = Path.of(args.length > 0 ? args[0] : "results");
		Files.createDirectories(results);
		Files.writeString(results.resolve(file), report);
		System.out.println(report);
	}

	/** The machine's TCP segments sent so far ({@code OutSegs}), or -1 where it cannot be read. */
	static long tcpSegmentsSent() {
		try {
			List<String> lines = Files.readAllLines(Path.of("/proc/net/snmp"));
			for (int i = 0; i + 1 < lines.size(); i++) {
				if (lines.get(i).startsWith("Tcp:") && lines.get(i + 1).startsWith("Tcp:")) {
					List<String> names = List.of(lines.get(i).split(" "));
					return Long.parseLong(lines.get(i + 1).split(" ")[names.indexOf("OutSegs")]);
				}
			}
			return -1;
		}
		catch (IOException | RuntimeException ex) {
			return -1;
		}
	}

	static String loadAverage() {
		try {
			return Files.readString(Path.of("/proc/loadavg")).split(" ")[0];
		}
		catch (IOException ex) {
			return "unknown";
		}
	}

	/** One cycle of a variant, given its sequence number. */
	@FunctionalInterface
	interface Cycle {

		void run(long sequence) throws Exception;

	}

	/** One way of running a cycle, and what its rounds measured. */
	static final class Variant {

		final String name;

		private final Cycle cycle;

		private final List<Double> rates = new ArrayList<>();

		private final List<Long> latencies = new ArrayList<>();

		private long sequence;

		/** The machine's TCP segments sent during the measured rounds, and their cycles. */
		private long segments;

		private long measuredCycles;

		Variant(String name, Cycle cycle) {
			this.name = name;
			this.cycle = cycle;
		}

		private double round(Duration length, List<Long> latencies) throws Exception {
			long segmentsBefore = tcpSegmentsSent();
			long end = System.nanoTime() + length.toNanos();
			long cycles = 0;
			long start = System.nanoTime();
			while (System.nanoTime() - end < 0) {
				long cycleStart = System.nanoTime();
				this.cycle.run(this.sequence++);
				if (latencies != null) {
					latencies.add(System.nanoTime() - cycleStart);
				}
				cycles++;
			}
			double rate = cycles / ((System.nanoTime() - start) / 1e9);
			if (latencies != null && segmentsBefore >= 0) {
				this.segments += tcpSegmentsSent() - segmentsBefore;
				this.measuredCycles += cycles;
			}
			return rate;
		}

		/**
		 * The TCP segments the machine sent per measured cycle (both ends of a connection to a
		 * local server count: about twice the round trips, fewer where acknowledgements ride
		 * with data), or a negative number where {@code /proc/net/snmp} cannot be read.
		 */
		double segmentsPerCycle() {
			return (this.measuredCycles == 0) ? -1 : this.segments / (double) this.measuredCycles;
		}

		/** The median of its rounds' cycles per second. */
		double median() {
			double[] sorted = this.rates.stream().mapToDouble(Double::doubleValue).sorted().toArray();
			return sorted[sorted.length / 2];
		}

		/** The median cycle's time, in milliseconds. */
		double p50Millis() {
			long[] sorted = this.latencies.stream().mapToLong(Long::longValue).sorted().toArray();
			return (sorted.length == 0) ? 0 : sorted[sorted.length / 2] / 1e6;
		}

	}

}
