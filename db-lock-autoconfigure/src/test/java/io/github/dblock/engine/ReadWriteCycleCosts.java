package io.github.dblock.engine;

import io.github.dblock.LockRequest;
import java.time.Duration;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import com.zaxxer.hikari.HikariDataSource;
import io.github.dblock.DbLockMode;
import io.github.dblock.jdbc.JdbcLockRepository;
import io.github.dblock.testsupport.Concurrently;
import io.github.dblock.testsupport.TestDatabase;

/**
 * A rough measure, not a benchmark: the time of an uncontended cycle (acquire, release, a
 * new key each time, fixed lease) in the lease, read and write modes, on one thread, in
 * interleaved rounds (the median printed); then {@code threads} threads cycling on one hot
 * key in each mode (cycles per second: readers share, lease holders and writers take turns).
 * Run with the test class path: {@code java ... ReadWriteCycleCosts H2|MARIADB|POSTGRESQL}.
 */
public final class ReadWriteCycleCosts {

	private static final List<DbLockMode> MODES = List.of(DbLockMode.LEASE, DbLockMode.READ, DbLockMode.WRITE);

	private ReadWriteCycleCosts() {
	}

	/**
	 * Runs the measure.
	 * @param args the database, rounds, cycles per round, hot-key threads, hot-key seconds
	 * @throws Exception on any failure
	 */
	public static void main(String[] args) throws Exception {
		TestDatabase database = TestDatabase.valueOf(args[0]);
		int rounds = (args.length > 1) ? Integer.parseInt(args[1]) : 5;
		int cycles = (args.length > 2) ? Integer.parseInt(args[2]) : 200;
		int threads = (args.length > 3) ? Integer.parseInt(args[3]) : 4;
		long seconds = (args.length > 4) ? Long.parseLong(args[4]) : 3;
		try (HikariDataSource dataSource = database.dataSource(threads + 4);
				LockEngine engine = new LockEngine(new JdbcLockRepository(dataSource, database.dialect(dataSource)),
						LockEngineSettings.of(new Backoff(Duration.ofMillis(2), Duration.ofMillis(50))))) {
			Map<DbLockMode, long[]> micros = new EnumMap<>(DbLockMode.class);
			AtomicInteger keys = new AtomicInteger();
			for (int round = -1; round < rounds; round++) {
				for (DbLockMode mode : MODES) {
					long start = System.nanoTime();
					for (int i = 0; i < cycles; i++) {
						engine.acquire(new LockRequest("cost-" + keys.incrementAndGet(), Duration.ZERO, Duration.ofSeconds(30),
								false, Duration.ZERO, mode)).close();
					}
					if (round >= 0) {
						micros.computeIfAbsent(mode, (m) -> new long[rounds])[round] = (System.nanoTime() - start) / 1000
								/ cycles;
					}
				}
			}
			StringBuilder report = new StringBuilder(database + ": uncontended cycle, median of " + rounds + " rounds of "
					+ cycles + ":");
			for (DbLockMode mode : MODES) {
				long[] values = micros.get(mode);
				Arrays.sort(values);
				report.append(' ').append(mode).append(' ').append(values[rounds / 2]).append(" us");
			}
			report.append("; hot key, ").append(threads).append(" threads, cycles/s:");
			for (DbLockMode mode : MODES) {
				AtomicLong done = new AtomicLong();
				long end = System.nanoTime() + Duration.ofSeconds(seconds).toNanos();
				String key = "hot-" + mode + "-" + System.nanoTime();
				Concurrently.run(threads, (thread) -> {
					while (System.nanoTime() - end < 0) {
						engine.acquire(new LockRequest(key, Duration.ofSeconds(60), Duration.ofSeconds(30), true,
								Duration.ZERO, mode)).close();
						done.incrementAndGet();
					}
				});
				report.append(' ').append(mode).append(' ')
					.append(String.format(Locale.ROOT, "%.0f", done.get() / (double) seconds));
			}
			System.out.println(report);
		}
	}

}
