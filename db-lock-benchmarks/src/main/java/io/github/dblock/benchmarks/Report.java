package io.github.dblock.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

import io.github.dblock.benchmarks.contender.ContenderKind;

/**
 * The run's tables: printed, and written under the results folder as {@code latest.md}
 * (for the README), {@code latest.csv}, {@code latest-targets.csv} and the bar charts
 * {@code latest.png} (XChart). Cycles that never reached the database (a key handed over
 * inside the JVM) have a table of their own and are in no chart.
 */
final class Report {

	static final String COMMAND = "./mvnw -pl db-lock-benchmarks -am verify -Pbench -DskipTests";

	private final Machine machine;

	private final BenchSettings settings;

	private final List<Measurement> measurements;

	private final List<TargetCheck> targets;

	Report(Machine machine, BenchSettings settings, List<Measurement> measurements, List<TargetCheck> targets) {
		this.machine = machine;
		this.settings = settings;
		this.measurements = measurements;
		this.targets = targets;
	}

	void write(Path folder) throws IOException {
		Files.createDirectories(folder);
		String markdown = markdown();
		System.out.println();
		System.out.println(markdown);
		String base = baseName(this.settings);
		Files.writeString(folder.resolve(base + ".md"), markdown);
		Files.writeString(folder.resolve(base + ".csv"), csv().csv());
		Files.writeString(folder.resolve(base + "-targets.csv"), targetTable().csv());
		ComparisonChart chart = new ComparisonChart(this.measurements);
		if (!chart.isEmpty()) {
			chart.write(folder.resolve(base + ".png"));
		}
	}

	/** The files' name without extension: {@code latest} (MariaDB, MySQL), {@code latest-postgresql}. */
	static String baseName(BenchSettings settings) {
		return settings.postgresql() ? "latest-postgresql" : "latest";
	}

	String markdown() {
		StringBuilder out = new StringBuilder();
		out.append("### Benchmark: db-lock and the alternatives (").append(this.machine.date()).append(")\n\n");
		out.append("Machine: ").append(this.machine.summary()).append(this.machine.load().isEmpty() ? "" : "; "
				+ this.machine.load()).append(".  \n");
		out.append(String.format("HikariCP pool of %d for every contender; %.1f s measured per contender and scenario "
				+ "after a warm-up (scenarios 1, 2, 4, 5: windows of %.1f s until the JIT is quiet, at most "
				+ ThroughputRun.MAX_WARMUP.toSeconds() + " s, then %d rounds, the contenders taking turns; cycles/s is the "
				+ "median round's). ", this.settings.poolSize(), this.settings.measure().toMillis() / 1000.0,
				this.settings.warmup().toMillis() / 1000.0, this.settings.rounds()));
		out.append(this.settings.postgresql()
				? "Statements are counted on the client (every statement the contender's JDBC connections executed, "
						+ "and each commit and rollback: `StatementTally`): PostgreSQL has no per-session statement "
						+ "counter, and `pg_stat_statements` is not loaded on this server (it needs "
						+ "`shared_preload_libraries`). GET_LOCK's counterpart is `pg_advisory_lock`/`pg_advisory_unlock`. "
						+ "Reproduce: `DB_LOCK_BENCH_URL=jdbc:postgresql://127.0.0.1:5432/test DB_LOCK_BENCH_USER=postgres "
						+ "DB_LOCK_BENCH_CURVES=none "
				: "Statements are the server's `Questions` counter of the contender's own sessions. Reproduce: `")
			.append(COMMAND)
			.append("`.\n\n");
		out.append("Uncontended and distinct keys (cycle = acquire + release, nothing held; only cycles whose "
				+ "acquisition reached the database count here):\n\n");
		out.append(throughputTable().markdown()).append('\n');
		Table local = localTable();
		out.append("Same-key re-acquisitions that never reached the database (the acquisition sent no statement: "
				+ "a thread of the same JVM handed the key over), counted apart and drawn in no chart: ");
		out.append(local.isEmpty() ? "none in this run.\n\n" : "\n\n" + local.markdown() + "\n");
		Table modes = modesTable();
		if (!modes.isEmpty()) {
			out.append("db-lock's transaction and named modes (`DbLockTemplate.acquire(DbLockMode, key, 5 s)`) against "
					+ "their hand-written counterparts: TRANSACTION in a `TransactionTemplate` (acquire, commit) against "
					+ "`SELECT ... FOR UPDATE` on a row that exists, in the same kind of transaction; NAMED (acquire, "
					+ "close) against " + (this.settings.postgresql() ? "`pg_advisory_lock`/`pg_advisory_unlock`"
							: "`GET_LOCK`/`RELEASE_LOCK`") + "; \"+ token\" reads the handle's fencing token while "
					+ "held. Neither kind of lock is durable (it ends with its connection):\n\n");
			out.append(modes.markdown()).append('\n');
		}
		out.append("Hot key: every holder holds the lock 1 ms; utilisation = time held / wall time; hand-off = from one "
				+ "holder's end to the next one's start; statements/s = the "
				+ (this.settings.postgresql() ? "clients' count summed over" : "server's count for") + " all JVMs; waiters' "
				+ "statements/s = what acquisitions sent beyond an uncontended acquisition (counted per thread):\n\n");
		out.append(hotKeyTable().markdown()).append('\n');
		out.append("Targets:\n\n").append(targetTable().markdown()).append('\n');
		List<String> errors = errors();
		if (!errors.isEmpty()) {
			out.append("Errors:\n\n");
			errors.forEach((line) -> out.append(line).append('\n'));
			out.append('\n');
		}
		out.append("![db-lock benchmark](").append(baseName(this.settings)).append(".png)\n");
		return out.toString();
	}

	private Table throughputTable() {
		Table table = new Table("scenario", "contender", "durable", "cycles/s", "x INSERT/DELETE", "p50 ms", "p99 ms",
				"statements/cycle", "reaches the database", "statement mix per cycle", "errors");
		for (Measurement m : this.measurements) {
			if (m.hotKey() == null) {
				table.row(m.scenario().label(), m.contender().label(), m.contender().durable() ? "yes" : "no",
						String.format("%.0f", m.cyclesPerSecond()), ratioToRaw(m), millis(m.p50Millis()),
						millis(m.p99Millis()), String.format("%.2f", m.statementsPerCycle()),
						reached(m), m.statementMix(), m.errors());
			}
		}
		return table;
	}

	private static String reached(Measurement m) {
		long all = m.cycles() + m.local().cycles();
		return (m.local().cycles() == 0) ? "every cycle"
				: String.format("%.1f%% of cycles", (all > 0) ? 100.0 * m.cycles() / all : 0.0);
	}

	/** Measurements with cycles that never reached the database. */
	private Table localTable() {
		Table table = new Table("scenario", "contender", "JVMs x threads", "re-acquisitions in the JVM",
				"per second", "share of all cycles", "p50 ms", "p99 ms");
		for (Measurement m : this.measurements) {
			Measurement.LocalCycles local = m.local();
			if (local.cycles() > 0) {
				long all = local.cycles() + ((m.hotKey() != null) ? 0 : m.cycles());
				long total = (m.hotKey() != null) ? Math.max(m.cycles(), local.cycles()) : all;
				table.row(m.scenario().label(), m.contender().label(), m.setup(), local.cycles(),
						String.format("%.0f", local.perSecond()),
						String.format("%.1f%%", (total > 0) ? 100.0 * local.cycles() / total : 0.0),
						millis(local.p50Millis()), millis(local.p99Millis()));
			}
		}
		return table;
	}

	private Table modesTable() {
		Table table = new Table("scenario", "contender", "against", "cycles/s", "x against", "p50 ms", "p99 ms",
				"statements/cycle", "statement mix per cycle", "errors");
		for (Measurement m : this.measurements) {
			ContenderKind counterpart = m.contender().counterpart();
			boolean isCounterpart = this.measurements.stream()
				.anyMatch((mode) -> mode.scenario() == m.scenario() && mode.contender().counterpart() == m.contender());
			if (m.hotKey() == null && (counterpart != null || isCounterpart)) {
				Optional<Measurement> base = (counterpart != null) ? this.measurements.stream()
					.filter((other) -> other.scenario() == m.scenario() && other.contender() == counterpart
							&& other.hotKey() == null)
					.findFirst() : Optional.empty();
				table.row(m.scenario().label(), m.contender().label(), (counterpart != null) ? counterpart.label() : "",
						String.format("%.0f", m.cyclesPerSecond()),
						base.map((b) -> String.format("%.2fx", m.cyclesPerSecond() / b.cyclesPerSecond())).orElse(""),
						millis(m.p50Millis()), millis(m.p99Millis()), String.format("%.2f", m.statementsPerCycle()),
						m.statementMix(), m.errors());
			}
		}
		return table;
	}

	private Table hotKeyTable() {
		Table table = new Table("contender", "JVMs x threads", "cycles/s", "of which in the JVM, no statement /s", "each JVM's share",
				"utilisation",
				"hand-off p50 ms", "hand-off p99 ms", "cycle p99 ms", "statements/s", "waiters' statements/s", "overlaps",
				"timeouts and errors");
		for (Measurement m : this.measurements) {
			Measurement.HotKeyStats hot = m.hotKey();
			if (hot != null) {
				table.row(m.contender().label(), m.setup(), String.format("%.0f", m.cyclesPerSecond()),
						String.format("%.0f", m.local().perSecond()), hot.shares(),
						String.format("%.1f%%", 100 * hot.utilisation()), millis(hot.handoffP50Millis()),
						millis(hot.handoffP99Millis()), millis(m.p99Millis()),
						String.format("%.0f", hot.statementsPerSecond()),
						String.format("%.0f", hot.waiterStatementsPerSecond()), hot.overlaps(), m.errors());
			}
		}
		return table;
	}

	private Table targetTable() {
		Table table = new Table("target", "measured", "required", "result");
		for (TargetCheck check : this.targets) {
			table.row(check.target(), check.measured(), check.required(), check.result());
		}
		return table;
	}

	private Table csv() {
		Table table = new Table("scenario", "contender", "durable", "jvms", "threads", "cycles", "seconds",
				"cycles_per_second", "p50_ms", "p99_ms", "statements_per_cycle", "statement_mix", "errors",
				"utilisation", "handoff_p50_ms", "handoff_p99_ms", "statements_per_second",
				"waiter_statements_per_second", "overlaps", "jvm_shares", "local_cycles", "local_p50_ms", "local_p99_ms");
		for (Measurement m : this.measurements) {
			Measurement.HotKeyStats hot = m.hotKey();
			table.row(m.scenario().number, m.contender().label(), m.contender().durable(), m.jvms(), m.threads(),
					m.cycles(), m.seconds(), String.format("%.1f", m.cyclesPerSecond()), millis(m.p50Millis()),
					millis(m.p99Millis()), String.format("%.3f", m.statementsPerCycle()), m.statementMix(), m.errors(),
					(hot != null) ? String.format("%.4f", hot.utilisation()) : "",
					(hot != null) ? millis(hot.handoffP50Millis()) : "", (hot != null) ? millis(hot.handoffP99Millis()) : "",
					(hot != null) ? String.format("%.1f", hot.statementsPerSecond()) : "",
					(hot != null) ? String.format("%.1f", hot.waiterStatementsPerSecond()) : "",
					(hot != null) ? hot.overlaps() : "", (hot != null) ? hot.shares() : "", m.local().cycles(),
					millis(m.local().p50Millis()), millis(m.local().p99Millis()));
		}
		return table;
	}

	private String ratioToRaw(Measurement m) {
		Optional<Measurement> raw = this.measurements.stream()
			.filter((other) -> other.scenario() == m.scenario() && other.contender() == ContenderKind.RAW_INSERT_DELETE
					&& other.hotKey() == null)
			.findFirst();
		return raw.map((r) -> String.format("%.2fx", m.cyclesPerSecond() / r.cyclesPerSecond())).orElse("");
	}

	private List<String> errors() {
		return this.measurements.stream()
			.filter((m) -> m.firstError() != null)
			.map((m) -> "- " + m.scenario().number + " " + m.contender().label() + " " + m.setup() + ": " + m.errors()
					+ " errors, first: " + m.firstError())
			.toList();
	}

	static String millis(double value) {
		return Double.isNaN(value) ? "" : String.format("%.2f", value);
	}

}
