package io.github.dblock.benchmarks;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import io.github.dblock.benchmarks.contender.ContenderKind;

import static io.github.dblock.benchmarks.contender.ContenderKind.DB_LOCK;
import static io.github.dblock.benchmarks.contender.ContenderKind.DB_LOCK_ANNOTATION;
import static io.github.dblock.benchmarks.contender.ContenderKind.DB_LOCK_NAMED;
import static io.github.dblock.benchmarks.contender.ContenderKind.DB_LOCK_NAMED_TOKEN;
import static io.github.dblock.benchmarks.contender.ContenderKind.DB_LOCK_TRANSACTION;
import static io.github.dblock.benchmarks.contender.ContenderKind.DB_LOCK_TRANSACTION_ROWS_EXIST;
import static io.github.dblock.benchmarks.contender.ContenderKind.DB_LOCK_TRANSACTION_TOKEN;
import static io.github.dblock.benchmarks.contender.ContenderKind.GET_LOCK;
import static io.github.dblock.benchmarks.contender.ContenderKind.JDBC_LOCK_REGISTRY;
import static io.github.dblock.benchmarks.contender.ContenderKind.RAW_INSERT_DELETE;
import static io.github.dblock.benchmarks.contender.ContenderKind.RAW_ON_LEASE_ROW;
import static io.github.dblock.benchmarks.contender.ContenderKind.SELECT_FOR_UPDATE;
import static io.github.dblock.benchmarks.contender.ContenderKind.SHEDLOCK;

/**
 * The targets, checked against the measurements of one run.
 */
final class Targets {

	/** db-lock's transaction and named modes against their hand-written counterparts. */
	static final double MODE_RATIO = 0.9;

	/** Doubling threads may add this much to the waiters' statements per second, plus half. */
	static final double WAITER_SLACK = 50;

	private final List<Measurement> measurements;

	private final List<TargetCheck> checks = new ArrayList<>();

	private Targets(List<Measurement> measurements) {
		this.measurements = measurements;
	}

	static List<TargetCheck> evaluate(List<Measurement> measurements) {
		Targets targets = new Targets(measurements);
		targets.ratio(Scenario.NEW_KEY, RAW_INSERT_DELETE, 0.95);
		targets.statements(Scenario.NEW_KEY);
		targets.ratio(Scenario.NEW_KEYS, RAW_INSERT_DELETE, 1.0);
		for (Scenario scenario : List.of(Scenario.NEW_KEY, Scenario.NEW_KEYS)) {
			targets.reported(scenario, SHEDLOCK);
			targets.reported(scenario, JDBC_LOCK_REGISTRY);
			targets.ceiling(scenario, SHEDLOCK);
			targets.aspectCost(scenario);
		}
		targets.reported(Scenario.NEW_KEY, RAW_ON_LEASE_ROW);
		targets.reported(Scenario.NEW_KEYS, RAW_ON_LEASE_ROW);
		for (Scenario scenario : List.of(Scenario.SINGLE_KEY, Scenario.NEW_KEY)) {
			targets.mode(scenario, DB_LOCK_TRANSACTION, DB_LOCK_TRANSACTION_TOKEN, SELECT_FOR_UPDATE);
			targets.mode(scenario, DB_LOCK_NAMED, DB_LOCK_NAMED_TOKEN, GET_LOCK);
		}
		targets.rowsExist();
		targets.utilisationInOneJvm();
		targets.twoJvms();
		targets.waiters();
		return targets.checks;
	}

	/** A ratio reported beside the targets, not one of them. */
	private void reported(Scenario scenario, ContenderKind other) {
		Optional<Measurement> dbLock = find(scenario, DB_LOCK, 1);
		Optional<Measurement> them = find(scenario, other, 1);
		if (dbLock.isPresent() && them.isPresent()) {
			this.checks.add(new TargetCheck(scenario.number + ": db-lock / " + other.label() + " cycles/s",
					String.format("%.2fx (%.0f / %.0f)", dbLock.get().cyclesPerSecond() / them.get().cyclesPerSecond(),
							dbLock.get().cyclesPerSecond(), them.get().cyclesPerSecond()),
					"", null));
		}
	}

	private void ratio(Scenario scenario, ContenderKind other, double required) {
		Optional<Measurement> dbLock = find(scenario, DB_LOCK, 1);
		Optional<Measurement> them = find(scenario, other, 1);
		if (dbLock.isEmpty() || them.isEmpty()) {
			return;
		}
		double ratio = dbLock.get().cyclesPerSecond() / them.get().cyclesPerSecond();
		this.checks.add(new TargetCheck(scenario.number + ": db-lock / " + other.label() + " cycles/s",
				String.format("%.2fx (%.0f / %.0f)", ratio, dbLock.get().cyclesPerSecond(), them.get().cyclesPerSecond()),
				String.format(">= %.2fx", required), ratio >= required));
	}

	/**
	 * A lock mode against its hand-written counterpart: the cycles/s target, the cycle that
	 * reads the fencing token beside it, and both contenders' statements per cycle.
	 */
	private void mode(Scenario scenario, ContenderKind mode, ContenderKind withToken, ContenderKind counterpart) {
		Optional<Measurement> them = find(scenario, counterpart, 1);
		if (them.isEmpty()) {
			return;
		}
		Measurement base = them.get();
		find(scenario, mode, 1).ifPresent((m) -> {
			double ratio = m.cyclesPerSecond() / base.cyclesPerSecond();
			this.checks.add(new TargetCheck(scenario.number + ": " + mode.label() + " / " + counterpart.label() + " cycles/s",
					String.format("%.2fx (%.0f / %.0f)", ratio, m.cyclesPerSecond(), base.cyclesPerSecond()),
					String.format(">= %.2fx", MODE_RATIO), ratio >= MODE_RATIO));
			this.checks.add(new TargetCheck(scenario.number + ": " + mode.label() + " / " + counterpart.label()
					+ " statements per cycle", String.format("%.2f (%s) / %.2f (%s)", m.statementsPerCycle(),
							m.statementMix(), base.statementsPerCycle(), base.statementMix()), "", null));
		});
		find(scenario, withToken, 1).ifPresent((m) -> this.checks.add(new TargetCheck(
				scenario.number + ": " + withToken.label() + " / " + counterpart.label() + " cycles/s",
				String.format("%.2fx (%.0f / %.0f; %.2f statements per cycle: %s)",
						m.cyclesPerSecond() / base.cyclesPerSecond(), m.cyclesPerSecond(), base.cyclesPerSecond(),
						m.statementsPerCycle(), m.statementMix()), "", null)));
	}

	/** Scenario 2's transaction mode on key rows that exist, as the hand-written contender's do. */
	private void rowsExist() {
		Optional<Measurement> dbLock = find(Scenario.NEW_KEY, DB_LOCK_TRANSACTION_ROWS_EXIST, 1);
		Optional<Measurement> them = find(Scenario.NEW_KEY, SELECT_FOR_UPDATE, 1);
		if (dbLock.isPresent() && them.isPresent()) {
			Measurement m = dbLock.get();
			this.checks.add(new TargetCheck("2: " + DB_LOCK_TRANSACTION_ROWS_EXIST.label() + " / "
					+ SELECT_FOR_UPDATE.label() + " cycles/s", String.format("%.2fx (%.0f / %.0f; %.2f statements per "
							+ "cycle: %s)", m.cyclesPerSecond() / them.get().cyclesPerSecond(), m.cyclesPerSecond(),
							them.get().cyclesPerSecond(), m.statementsPerCycle(), m.statementMix()), "", null));
		}
	}

	/** What the raw pattern, two durable commits and nothing else, reaches against another contender. */
	private void ceiling(Scenario scenario, ContenderKind other) {
		Optional<Measurement> raw = find(scenario, RAW_INSERT_DELETE, 1);
		Optional<Measurement> them = find(scenario, other, 1);
		if (raw.isPresent() && them.isPresent()) {
			this.checks.add(new TargetCheck(
					scenario.number + ": INSERT/DELETE / " + other.label() + " cycles/s (two commits a cycle, nothing else)",
					String.format("%.2fx", raw.get().cyclesPerSecond() / them.get().cyclesPerSecond()), "", null));
		}
	}

	private void statements(Scenario scenario) {
		find(scenario, DB_LOCK, 1).ifPresent((m) -> this.checks.add(new TargetCheck(
				scenario.number + ": db-lock statements per cycle", String.format("%.2f (%s)", m.statementsPerCycle(),
						m.statementMix()), "<= 2", m.statementsPerCycle() <= 2.005)));
	}

	private void aspectCost(Scenario scenario) {
		Optional<Measurement> template = find(scenario, DB_LOCK, 1);
		Optional<Measurement> annotation = find(scenario, DB_LOCK_ANNOTATION, 1);
		if (template.isPresent() && annotation.isPresent()) {
			this.checks.add(new TargetCheck(scenario.number + ": @DbLock / DbLockTemplate cycles/s (the aspect's cost)",
					String.format("%.2fx", annotation.get().cyclesPerSecond() / template.get().cyclesPerSecond()), "",
					null));
		}
	}

	/** Renewed leases passed between threads of one JVM without a statement. */
	private void utilisationInOneJvm() {
		findHot(1, 8).ifPresent((m) -> this.checks.add(new TargetCheck("3: db-lock lock utilisation, 1 JVM x 8 threads",
				String.format("%.1f%% (hand-off p50 %.2f ms)", 100 * m.hotKey().utilisation(), m.hotKey().handoffP50Millis()),
				">= 90%", m.hotKey().utilisation() >= 0.9)));
	}

	/** Two JVMs on one hot key: both served, nobody times out, the lock stays busy. */
	private void twoJvms() {
		findHot(2, 8).ifPresent((m) -> {
			Measurement.HotKeyStats hot = m.hotKey();
			this.checks.add(new TargetCheck("3: db-lock each JVM's share, 2 JVMs x 8 threads", hot.shares(),
					">= 30% each", hot.smallestShare() >= 0.3));
			this.checks.add(new TargetCheck("3: db-lock attempts timed out (5 s wait), 2 JVMs x 8 threads",
					String.valueOf(m.errors()), "0", m.errors() == 0));
			this.checks.add(new TargetCheck("3: db-lock lock utilisation, 2 JVMs x 8 threads",
					String.format("%.1f%% (hand-off p50 %.2f ms)", 100 * hot.utilisation(), hot.handoffP50Millis()),
					">= 70%", hot.utilisation() >= 0.7));
		});
	}

	/** Doubling the threads of a JVM count must not grow the waiters' statements much. */
	private void waiters() {
		Optional<Measurement> oneByEight = findHot(1, 8);
		Optional<Measurement> oneBySixteen = findHot(1, 16);
		Optional<Measurement> twoByFour = findHot(2, 4);
		Optional<Measurement> twoByEight = findHot(2, 8);
		if (oneByEight.isEmpty() || oneBySixteen.isEmpty() || twoByFour.isEmpty() || twoByEight.isEmpty()) {
			return;
		}
		double w18 = waiters(oneByEight.get());
		double w116 = waiters(oneBySixteen.get());
		double w24 = waiters(twoByFour.get());
		double w28 = waiters(twoByEight.get());
		boolean pass = w116 <= 1.5 * w18 + WAITER_SLACK && w28 <= 1.5 * w24 + WAITER_SLACK;
		this.checks.add(new TargetCheck("3: db-lock waiters' statements/s grow with JVMs, not threads",
				String.format("1x8 %.0f, 1x16 %.0f; 2x4 %.0f, 2x8 %.0f", w18, w116, w24, w28),
				String.format("x2 threads: <= 1.5x + %.0f", WAITER_SLACK), pass));
	}

	private static double waiters(Measurement m) {
		return m.hotKey().waiterStatementsPerSecond();
	}

	private Optional<Measurement> findHot(int jvms, int threads) {
		return this.measurements.stream()
			.filter((m) -> m.scenario() == Scenario.HOT_KEY && m.contender() == DB_LOCK && m.jvms() == jvms
					&& m.threads() == threads)
			.findFirst();
	}

	private Optional<Measurement> find(Scenario scenario, ContenderKind kind, int jvms) {
		return this.measurements.stream()
			.filter((m) -> m.scenario() == scenario && m.contender() == kind && m.jvms() == jvms)
			.reduce((first, later) -> later);
	}

}
