package io.github.dblock.maintenance;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import com.zaxxer.hikari.HikariDataSource;
import io.github.dblock.engine.Backoff;
import io.github.dblock.engine.LockEngine;
import io.github.dblock.engine.LockEngineSettings;
import io.github.dblock.jdbc.JdbcConnectionLockRepository;
import io.github.dblock.jdbc.JdbcLockHistoryRepository;
import io.github.dblock.jdbc.JdbcLockRepository;
import io.github.dblock.jdbc.Lease;
import io.github.dblock.testsupport.TestDatabase;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The recovery job on MariaDB with 10^5 live rows in the lock table and one hold past
 * {@code max-hold}: while its transaction is open, another node's acquisitions of free
 * keys must not wait for it. The job's transaction is held open deterministically by a
 * test-only trigger that sleeps one second when it closes the freed hold's log row.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class MariaDbRecoveryStallTests {

	private static final int ROWS = 100_000;

	private static final String TABLE = TestDatabase.TABLE;

	private HikariDataSource dataSource;

	private HikariDataSource otherNode;

	private JdbcTemplate jdbc;

	private JdbcLockRepository leases;

	private JdbcLockRepository otherLeases;

	private LockEngine engine;

	@BeforeAll
	void fill() {
		this.dataSource = TestDatabase.MARIADB.dataSource(4);
		this.otherNode = TestDatabase.MARIADB.dataSource(2);
		this.jdbc = new JdbcTemplate(this.dataSource);
		this.leases = new JdbcLockRepository(this.dataSource, TestDatabase.MARIADB.dialect(this.dataSource));
		this.otherLeases = new JdbcLockRepository(this.otherNode, TestDatabase.MARIADB.dialect(this.otherNode));
		this.engine = new LockEngine(this.leases, new JdbcConnectionLockRepository(this.leases.connections(), this.dataSource),
				LockEngineSettings.of(new Backoff(Duration.ofMillis(2), Duration.ofMillis(50))));
		this.jdbc.update("DELETE FROM " + TABLE + "_history");
		this.jdbc.update("INSERT INTO " + TABLE + " (lock_key, owner, acquired_at, expires_at) SELECT "
				+ "CONCAT('live-', seq), 'live-owner', UTC_TIMESTAMP(6), UTC_TIMESTAMP(6) + INTERVAL 1 HOUR FROM seq_1_to_"
				+ ROWS);
		this.jdbc.execute("DROP TRIGGER IF EXISTS " + TABLE + "_test_stall");
	}

	@AfterAll
	void close() {
		this.jdbc.execute("DROP TRIGGER IF EXISTS " + TABLE + "_test_stall");
		this.jdbc.update("DELETE FROM " + TABLE);
		this.jdbc.update("DELETE FROM " + TABLE + "_history");
		this.engine.close();
		this.otherNode.close();
		this.dataSource.close();
	}

	private void stuckHold(String key) {
		this.jdbc.update("INSERT INTO " + TABLE + " (lock_key, owner, acquired_at, expires_at) VALUES "
				+ "(?, 'stuck-owner', UTC_TIMESTAMP(6) - INTERVAL 1 HOUR, UTC_TIMESTAMP(6) + INTERVAL 1 HOUR)", key);
		this.jdbc.update("INSERT INTO " + TABLE + "_history (lock_key, mode, owner, token, acquired_at) "
				+ "VALUES (?, 'LEASE', 'stuck-owner', 1, UTC_TIMESTAMP(6) - INTERVAL 1 HOUR)", key);
	}

	/** Another node's acquisitions of free keys, one after another while the job runs. */
	private Stall acquireWhile(CompletableFuture<?> job, String prefix) {
		int done = 0;
		int failed = 0;
		long longest = 0;
		for (int i = 0; !job.isDone() || done == 0; i++) {
			long start = System.nanoTime();
			try {
				Optional<Lease> lease = this.otherLeases.tryAcquire(prefix + i, "other-" + i, Duration.ofMinutes(1));
				if (lease.isEmpty()) {
					failed++;
				}
			}
			catch (RuntimeException ex) {
				failed++;
			}
			longest = Math.max(longest, System.nanoTime() - start);
			if (!job.isDone()) {
				done++;
			}
			else {
				break;
			}
		}
		return new Stall(done, failed, Duration.ofNanos(longest));
	}

	@Test
	void anotherNodesAcquisitionsDoNotWaitForTheRecoveryJob() throws Exception {
		LockRecovery recovery = new LockRecovery(this.engine, new JdbcLockHistoryRepository(this.leases.connections()),
				Duration.ofMinutes(10), null, Duration.ofMinutes(1));
		// measured: the job as it is, on 10^5 rows
		stuckHold("stuck-1");
		long start = System.nanoTime();
		CompletableFuture<Optional<LockRecovery.Run>> measured = CompletableFuture.supplyAsync(recovery::run);
		Stall free = acquireWhile(measured, "measured-");
		Duration took = Duration.ofNanos(System.nanoTime() - start);
		assertThat(measured.get(1, TimeUnit.MINUTES).orElseThrow().recovered()).isEqualTo(1);
		System.out.println("MariaDbRecoveryStallTests measured: rows=" + ROWS + " recoveryRun=" + took.toMillis()
				+ "ms acquisitionsDuringRun=" + free.done + " failed=" + free.failed + " longestAcquisition="
				+ free.longest.toMillis() + "ms");
		// deterministic: the job's transaction held open for a second after it locked what it frees
		stuckHold("stuck-2");
		this.jdbc.execute("CREATE TRIGGER " + TABLE + "_test_stall BEFORE UPDATE ON " + TABLE + "_history FOR EACH ROW "
				+ "BEGIN IF NEW.outcome = 'recovered' THEN DO SLEEP(1); END IF; END");
		CompletableFuture<Optional<LockRecovery.Run>> stalled = CompletableFuture.supplyAsync(recovery::run);
		while (!stalled.isDone() && this.jdbc.queryForObject("SELECT COUNT(*) FROM information_schema.processlist "
				+ "WHERE state = 'User sleep' AND db = DATABASE()", Integer.class) == 0) {
			LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
		}
		assertThat(stalled).isNotDone();
		// each acquisition begins while the job's transaction is open; one that ends after the job committed waited for it
		int blocked = 0;
		int whileOpen = 0;
		int failed = 0;
		for (int i = 0; i < 20; i++) {
			if (!this.otherLeases.tryAcquire("stalled-" + i, "other-" + i, Duration.ofMinutes(1)).isPresent()) {
				failed++;
			}
			boolean committed = new JdbcTemplate(this.otherNode).queryForObject(
					"SELECT COUNT(*) FROM " + TABLE + " WHERE lock_key = 'stuck-2'", Integer.class) == 0;
			if (committed) {
				blocked++;
				break;
			}
			whileOpen++;
		}
		assertThat(stalled.get(1, TimeUnit.MINUTES).orElseThrow().recovered()).isEqualTo(1);
		System.out.println("MariaDbRecoveryStallTests held open 1 s: acquisitionsWhileOpen=" + whileOpen + " failed="
				+ failed + " blocked=" + blocked);
		Stall held = new Stall(whileOpen, failed, Duration.ZERO);
		assertThat(held.failed).isZero();
		assertThat(blocked).isZero();
	}

	private record Stall(int done, int failed, Duration longest) {
	}

}
