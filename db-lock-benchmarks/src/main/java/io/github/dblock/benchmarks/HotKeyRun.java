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

import org.springframework.jdbc.datasource.DriverManagerDataSource;

/**
 * Scenario 3: several {@link HotKeyWorker} JVMs, several threads each, on one key, each
 * holder holding it 1 ms. Measures lock utilisation, hand-off latency and the statements
 * that waiting costs the server.
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
	 * Runs one configuration.
	 * @param kind the contender
	 * @param jvms how many worker JVMs
	 * @param threads threads per worker
	 */
	Measurement measure(ContenderKind kind, int jvms, int threads) throws Exception {
		kind.create(new DriverManagerDataSource(this.settings.url(), this.settings.user(), this.settings.password()), true)
			.close();
		String key = this.runId + "-hot-" + jvms + "x" + threads;
		List<Process> workers = new ArrayList<>();
		List<Path> outcomeFiles = new ArrayList<>();
		try {
			for (int i = 0; i < jvms; i++) {
				Path outcomeFile = Files.createTempFile("db-lock-bench-", ".bin");
				outcomeFiles.add(outcomeFile);
				workers.add(start(kind, threads, key, outcomeFile));
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
					throw new IllegalStateException("Hot-key worker " + i + " of " + kind.label() + " did not finish");
				}
				if (worker.exitValue() != 0) {
					throw new IllegalStateException(
							"Hot-key worker " + i + " of " + kind.label() + " failed with exit code " + worker.exitValue());
				}
				Outcome ofWorker = HotKeyWorker.read(outcomeFiles.get(i));
				jvmCycles.add(java.util.Arrays.stream(ofWorker.holdStarts.toArray()).filter((at) -> at >= start && at < end).count());
				outcome.add(ofWorker, true);
			}
			return measurement(kind, jvms, threads, outcome, end, jvmCycles);
		}
		finally {
			workers.forEach(Process::destroyForcibly);
			for (Path file : outcomeFiles) {
				Files.deleteIfExists(file);
			}
		}
	}

	private Process start(ContenderKind kind, int threads, String key, Path outcomeFile) throws IOException {
		String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
		return new ProcessBuilder(java, "-Xms256m", "-Xmx256m", "-cp", System.getProperty("java.class.path"),
				HotKeyWorker.class.getName(), kind.name(), Integer.toString(threads),
				Long.toString(HOLD.toNanos() / 1000), key, outcomeFile.toString())
			.redirectError(ProcessBuilder.Redirect.INHERIT)
			.start();
	}

	private static void awaitReady(Process worker) throws IOException {
		BufferedReader output = new BufferedReader(new InputStreamReader(worker.getInputStream(), StandardCharsets.UTF_8));
		for (String line = output.readLine(); !"READY".equals(line); line = output.readLine()) {
			if (line == null) {
				throw new IllegalStateException("A hot-key worker ended before it was ready");
			}
		}
	}

	/**
	 * Utilisation, cycles and hand-offs count in the window; statements count until the
	 * last waiter got its lock, and so do the cycles they are divided by.
	 */
	private static Measurement measurement(ContenderKind kind, int jvms, int threads, Outcome outcome, long end,
			List<Long> jvmCycles) {
		long start = outcome.startNanos;
		long questions = outcome.statements.questions();
		long allCycles = outcome.cycles();
		long[][] holds = holdsByStart(outcome);
		long held = 0;
		long cycles = 0;
		long overlaps = 0;
		LongList handoffs = new LongList();
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
					handoffs.add(gap);
				}
			}
		}
		double seconds = (end - start) / 1e9;
		double waiterStatements = outcome.waiterStatements / outcome.seconds();
		Measurement.HotKeyStats stats = new Measurement.HotKeyStats(held / (double) (end - start),
				handoffs.percentileMillis(0.5), handoffs.percentileMillis(0.99), questions / outcome.seconds(),
				waiterStatements, overlaps, jvmCycles);
		return new Measurement(Scenario.HOT_KEY, kind, jvms, threads, cycles, seconds, cycles / seconds,
				outcome.latencies.percentileMillis(0.5), outcome.latencies.percentileMillis(0.99),
				(allCycles > 0) ? questions / (double) allCycles : Double.NaN, outcome.statements.mixPerCycle(allCycles),
				outcome.errors, outcome.firstError, stats);
	}

	private static long[][] holdsByStart(Outcome outcome) {
		long[][] holds = new long[outcome.holdStarts.size()][];
		for (int i = 0; i < holds.length; i++) {
			holds[i] = new long[] { outcome.holdStarts.get(i), outcome.holdEnds.get(i) };
		}
		Arrays.sort(holds, Comparator.comparingLong((long[] hold) -> hold[0]));
		return holds;
	}

}
