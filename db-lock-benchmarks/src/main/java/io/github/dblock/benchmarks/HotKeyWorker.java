package io.github.dblock.benchmarks;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.BufferedReader;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import com.zaxxer.hikari.HikariDataSource;
import io.github.dblock.benchmarks.contender.ContenderKind;
import io.github.dblock.benchmarks.contender.LockContender;

/**
 * One JVM of the hot-key scenario, started by {@link HotKeyRun} on the same class path:
 * opens its own pool and contender (through a {@link StatementTally}), warms up on keys of
 * its own (which also tells what an uncontended acquisition sends), prints {@code READY},
 * reads {@code GO <startNanos> <endNanos>} from standard input, runs its threads on the
 * hot key in that window and writes its {@link Outcome}, with the statements its pool's
 * sessions ran, to a file.
 * <p>
 * Arguments: contender (a {@link ContenderKind} name), threads, hold in microseconds,
 * the hot key, the outcome file, and optionally {@code same} (every thread on the key, the
 * default) or {@code distinct} (each thread a key of its own, derived from it), and the
 * pool size.
 */
public final class HotKeyWorker {

	private HotKeyWorker() {
	}

	/**
	 * Runs the worker.
	 * @param args contender, threads, hold in microseconds, key, outcome file, keys, pool size
	 * @throws Exception if the worker fails: the coordinator then reports it
	 */
	public static void main(String[] args) throws Exception {
		ContenderKind kind = ContenderKind.valueOf(args[0]);
		int threads = Integer.parseInt(args[1]);
		long holdNanos = Long.parseLong(args[2]) * 1000;
		String key = args[3];
		Path outcomeFile = Path.of(args[4]);
		boolean distinct = args.length > 5 && "distinct".equals(args[5]);
		BenchSettings settings = BenchSettings.fromEnvironment();
		if (args.length > 6) {
			settings = settings.withPoolSize(Integer.parseInt(args[6]));
		}
		try (HikariDataSource pool = settings.openPool("worker-" + ProcessHandle.current().pid());
				LockContender contender = kind.create(StatementTally.counting(pool), false)) {
			long warmStart = System.nanoTime();
			Outcome warmup = new CycleLoop(contender, threads,
					KeyScheme.perThread(key + "-warm-" + ProcessHandle.current().pid()), 0)
				.run(warmStart, warmStart + settings.warmup().toNanos());
			System.out.println("READY");
			System.out.flush();
			BufferedReader commands = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
			String go = commands.readLine();
			if (go == null || !go.startsWith("GO ")) {
				throw new IllegalStateException("Expected 'GO <start> <end>', got " + go);
			}
			String[] window = go.split(" ");
			// the server's session counters are MariaDB's and MySQL's; on PostgreSQL the tally alone counts
			boolean server = !settings.postgresql();
			StatementCounts before = server ? StatementCounts.read(pool, settings.poolSize()) : StatementCounts.ZERO;
			long tallied = StatementTally.all();
			KeyScheme keys = distinct ? KeyScheme.perThread(key + "-" + ProcessHandle.current().pid()) : KeyScheme.same(key);
			Outcome outcome = new CycleLoop(contender, threads, keys, holdNanos, !distinct)
				.run(Long.parseLong(window[1]), Long.parseLong(window[2]));
			outcome.statements = server ? StatementCounts.read(pool, settings.poolSize()).since(before)
					: StatementCounts.counted(StatementTally.all() - tallied);
			outcome.countWaiterStatements(warmup.uncontendedAcquireStatements());
			try (OutputStream file = Files.newOutputStream(outcomeFile);
					DataOutputStream out = new DataOutputStream(new BufferedOutputStream(file))) {
				outcome.writeTo(out);
			}
		}
		System.exit(0);
	}

	static Outcome read(Path outcomeFile) throws IOException {
		try (DataInputStream in = new DataInputStream(new BufferedInputStream(Files.newInputStream(outcomeFile)))) {
			return Outcome.readFrom(in);
		}
	}

}
