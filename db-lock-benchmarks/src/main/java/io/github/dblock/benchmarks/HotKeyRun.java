package io.github.dblock.benchmarks;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.github.dblock.benchmarks.contender.ContenderKind;
import org.HdrHistogram.Histogram;

import org.springframework.jdbc.datasource.DriverManagerDataSource;

/**
 * Several {@link HotKeyWorker} JVMs, several threads each, in one window: scenario 3 (one
 * key, each holder holding it 1 ms: lock utilisation, hand-off latency, the statements
 * that waiting costs the server) and the JVM curve (the same, and distinct keys: a key per
 * thread, nothing held).
 */
final class HotKeyRun {

	static final Duration HOLD = Duration.ofMillis(1);

	private final BenchSettings settings;

	private final String runId;

	HotKeyRun(BenchSettings settings, String runId) {
		this.settings = settings;
		this.runId = runId;
	}

	/**
	 * What the JVMs of one run did together.
	 *
	 * @param outcome their outcomes merged, holds tagged with their JVM
	 * @param start the window's start ({@link System#nanoTime()})
	 * @param end its end
	 * @param jvmCycles each JVM's cycles in the window
	 */
	record JvmsOutcome(Outcome outcome, long start, long end, List<Long> jvmCycles) {

		double seconds() {
			return (this.end - this.start) / 1e9;
		}

	}

	/**
	 * What the holds of a hot-key window tell.
	 *
	 * @param utilisation time held / wall time
	 * @param cycles holds that started in the window
	 * @param handoffs gaps from one holder's end to the next one's start, nanoseconds
	 * @param crossJvmHandoffs those where the next holder was in another JVM
	 * @param overlaps two holders at once
	 */
	record Holds(double utilisation, long cycles, Histogram handoffs, Histogram crossJvmHandoffs, long overlaps) {

	}

	/**
	 * Runs scenario 3's configuration.
	 * @param kind the contender
	 * @param jvms how many worker JVMs
	 * @param threads threads per worker
	 */
	Measurement measure(ContenderKind kind, int jvms, int threads) throws Exception {
		return measurement(kind, jvms, threads, run(kind, jvms, threads, false));
	}

	/**
	 * Runs worker JVMs in one window.
	 * @param kind the contender
	 * @param jvms how many worker JVMs
	 * @param threads threads per worker
	 * @param distinct a key per thread and nothing held, else one key held 1 ms at a time
	 */
	JvmsOutcome run(ContenderKind kind, int jvms, int threads, boolean distinct) throws Exception {
		kind.create(new DriverManagerDataSource(this.settings.url(), this.settings.user(), this.settings.password()), true)
			.close();
		String key = this.runId + (distinct ? "-own-" : "-hot-") + jvms + "x" + threads;
		List<Process> workers = new ArrayList<>();
		List<Path> outcomeFiles = new ArrayList<>();
		try {
			for (int i = 0; i < jvms; i++) {
				Path outcomeFile = Files.createTempFile("db-lock-bench-", ".bin");
				outcomeFiles.add(outcomeFile);
				workers.add(start(kind, threads, key, outcomeFile, distinct));
			}
			for (Process worker : workers) {
				awaitReady(worker);
			}
			long start = System.nanoTime() + Duration.ofMillis(200).toNanos();
			long end = start + this.settings.measure().toNanos();
			for (Process worker : workers) {
				Writer commands = new OutputStreamWriter(worker.getOutputStream(), StandardCharsets.UTF_8);
				commands.write("GO " + start + " " + end + "\n");
				commands.flush();
			}
			Outcome outcome = new Outcome(start);
			List<Long> jvmCycles = new ArrayList<>();
			for (int i = 0; i < jvms; i++) {
				Process worker = workers.get(i);
				if (!worker.waitFor(this.settings.measure().toSeconds() + 60, TimeUnit.SECONDS)) {
					throw new IllegalStateException("Worker " + i + " of " + kind.label() + " did not finish");
				}
				if (worker.exitValue() != 0) {
					throw new IllegalStateException(
							"Worker " + i + " of " + kind.label() + " failed with exit code " + worker.exitValue());
				}
				Outcome ofWorker = HotKeyWorker.read(outcomeFiles.get(i));
				jvmCycles.add(distinct ? ofWorker.cycles()
						: Arrays.stream(ofWorker.holdStarts.toArray()).filter((at) -> at >= start && at < end).count());
				outcome.add(ofWorker, true, i);
			}
			return new JvmsOutcome(outcome, start, end, jvmCycles);
		}
		finally {
			workers.forEach(Process::destroyForcibly);
			for (Path file : outcomeFiles) {
				Files.deleteIfExists(file);
			}
		}
	}

	private Process start(ContenderKind kind, int threads, String key, Path outcomeFile, boolean distinct)
			throws IOException {
		String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
		// a worker's pool: its threads' connections, at most the configured pool
		int pool = Math.min(threads, this.settings.poolSize());
		return new ProcessBuilder(java, "-Xms256m", "-Xmx256m", "-cp", System.getProperty("java.class.path"),
				HotKeyWorker.class.getName(), kind.name(), Integer.toString(threads),
				Long.toString(distinct ? 0 : HOLD.toNanos() / 1000), key, outcomeFile.toString(),
				distinct ? "distinct" : "same", Integer.toString(pool))
			.redirectError(ProcessBuilder.Redirect.INHERIT)
			.start();
	}

	private static void awaitReady(Process worker) throws IOException {
		BufferedReader output = new BufferedReader(new InputStreamReader(worker.getInputStream(), StandardCharsets.UTF_8));
		for (String line = output.readLine(); !"READY".equals(line); line = output.readLine()) {
			if (line == null) {
				throw new IllegalStateException("A worker ended before it was ready");
			}
		}
	}

	/** Utilisation, cycles and hand-offs in the window, from the holds of every JVM. */
	static Holds holds(JvmsOutcome run) {
		long start = run.start();
		long end = run.end();
		long[][] holds = holdsByStart(run.outcome());
		long held = 0;
		long cycles = 0;
		long overlaps = 0;
		Histogram handoffs = Latencies.nanos();
		Histogram crossJvm = Latencies.nanos();
		for (int i = 0; i < holds.length; i++) {
			long[] hold = holds[i];
			held += Math.max(0, Math.min(hold[1], end) - Math.max(hold[0], start));
			if (hold[0] < start || hold[0] >= end) {
				continue;
			}
			cycles++;
			if (i > 0 && holds[i - 1][0] >= start) {
				long gap = hold[0] - holds[i - 1][1];
				if (gap < 0) {
					overlaps++;
				}
				else {
					handoffs.recordValue(gap);
					if (hold[2] != holds[i - 1][2]) {
						crossJvm.recordValue(gap);
					}
				}
			}
		}
		return new Holds(held / (double) (end - start), cycles, handoffs, crossJvm, overlaps);
	}

	/**
	 * Utilisation, cycles and hand-offs count in the window; statements count until the
	 * last waiter got its lock, and so do the cycles they are divided by.
	 */
	private static Measurement measurement(ContenderKind kind, int jvms, int threads, JvmsOutcome run) {
		Outcome outcome = run.outcome();
		long questions = outcome.statements.questions();
		long allCycles = outcome.cycles();
		Holds holds = holds(run);
		printSplit(kind, jvms, threads, holds);
		double seconds = run.seconds();
		double waiterStatements = outcome.waiterStatements / outcome.seconds();
		Measurement.HotKeyStats stats = new Measurement.HotKeyStats(holds.utilisation(),
				Latencies.millis(holds.handoffs(), 50), Latencies.millis(holds.handoffs(), 99),
				questions / outcome.seconds(), waiterStatements, holds.overlaps(), run.jvmCycles());
		// the cycle latency of every hold, whether it reached the database or not
		Histogram all = outcome.latencies.copy();
		all.add(outcome.localLatencies);
		return new Measurement(Scenario.HOT_KEY, kind, jvms, threads, holds.cycles(), seconds, holds.cycles() / seconds,
				Latencies.millis(all, 50), Latencies.millis(all, 99),
				(allCycles > 0) ? questions / (double) allCycles : Double.NaN, outcome.statements.mixPerCycle(allCycles),
				outcome.errors, outcome.firstError, stats, Measurement.LocalCycles.of(outcome, outcome.seconds()));
	}

	/**
	 * Prints the hand-offs inside a JVM and across JVMs apart (a run's utilisation depends on
	 * their shares, which the order of the first holds sets: each thread enqueues again as it
	 * releases).
	 */
	private static void printSplit(ContenderKind kind, int jvms, int threads, Holds holds) {
		long all = holds.handoffs().getTotalCount();
		long across = holds.crossJvmHandoffs().getTotalCount();
		if (jvms < 2 || all == 0) {
			return;
		}
		double acrossMean = holds.crossJvmHandoffs().getMean();
		double insideMean = (all > across) ? (holds.handoffs().getMean() * all - acrossMean * across) / (all - across)
				: Double.NaN;
		System.out.printf("  %s %dx%d hand-offs: %d, across JVMs %.0f%%; inside a JVM mean %.2f ms; across JVMs "
				+ "p50 %.2f ms, mean %.2f ms%n", kind.label(), jvms, threads, all, 100.0 * across / all, insideMean / 1e6,
				Latencies.millis(holds.crossJvmHandoffs(), 50), acrossMean / 1e6);
	}

	private static long[][] holdsByStart(Outcome outcome) {
		long[][] holds = new long[outcome.holdStarts.size()][];
		for (int i = 0; i < holds.length; i++) {
			holds[i] = new long[] { outcome.holdStarts.get(i), outcome.holdEnds.get(i), outcome.holdJvms.get(i) };
		}
		Arrays.sort(holds, Comparator.comparingLong((long[] hold) -> hold[0]));
		return holds;
	}

}
