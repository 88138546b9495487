package io.github.dblock.maintenance;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import com.zaxxer.hikari.HikariDataSource;
import io.github.dblock.engine.Backoff;
import io.github.dblock.engine.LockEngine;
import io.github.dblock.engine.LockEngineSettings;
import io.github.dblock.engine.LockListener;
import io.github.dblock.engine.LockScheduler;
import io.github.dblock.jdbc.FairLockRepository;
import io.github.dblock.jdbc.JdbcLockRepository;
import io.github.dblock.jdbc.ReadWriteLockRepository;
import io.github.dblock.testsupport.TestDatabase;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The reaper on a real database: every table's expired rows go (the lock table, the
 * read/write modes' and the fair queue), live rows stay, and started it runs on the
 * engine's scheduler until stopped.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class LockReaperContractTests {

	private static final String TABLE = TestDatabase.TABLE;

	private static final Duration EXPIRED = Duration.ofNanos(1000);

	/** A reader's: its check counts its own row only while its lease lasts, so one that ends at once is refused. */
	private static final Duration SOON_EXPIRED = Duration.ofSeconds(1);

	private static final Duration LIVE = Duration.ofMinutes(5);

	private HikariDataSource dataSource;

	private JdbcTemplate jdbc;

	private JdbcLockRepository repository;

	protected abstract TestDatabase database();

	@BeforeAll
	void createDataSource() {
		this.dataSource = database().dataSource(4);
		this.jdbc = new JdbcTemplate(this.dataSource);
		this.repository = new JdbcLockRepository(this.dataSource, database().dialect(this.dataSource));
	}

	@AfterAll
	void closeDataSource() {
		if (this.dataSource != null) {
			this.dataSource.close();
		}
	}

	@BeforeEach
	void emptyTables() {
		for (String table : List.of(TABLE, TABLE + "_rw", TABLE + "_rw_intents", TABLE + "_fair_queue")) {
			this.jdbc.update("DELETE FROM " + table);
		}
	}

	@Test
	void aRunDeletesTheExpiredRowsOfEveryTableAndKeepsTheLiveOnes() {
		ReadWriteLockRepository readWrite = this.repository.readWriteLocks().orElseThrow();
		FairLockRepository fair = this.repository.fairQueue().orElseThrow();
		for (int i = 0; i < 3; i++) {
			this.repository.tryAcquire("lease-expired-" + i, "a" + i, EXPIRED).orElseThrow();
			readWrite.tryRead("read-expired-" + i, "b" + i, SOON_EXPIRED).orElseThrow();
			fair.enqueue("fair-expired-" + i, "c" + i, EXPIRED);
		}
		this.repository.tryAcquire("lease-live", "a", LIVE).orElseThrow();
		readWrite.tryRead("read-live", "b", LIVE).orElseThrow();
		fair.enqueue("fair-live", "c", LIVE);
		awaitExpired(3);
		List<Integer> told = new CopyOnWriteArrayList<>();
		// a batch of two: each table takes more than one statement
		LockReaper reaper = new LockReaper(this.repository, 2, Duration.ofMinutes(1), new LockScheduler());
		reaper.addListener(new LockListener() {
			@Override
			public void reaped(int rows) {
				told.add(rows);
			}
		});
		assertThat(reaper.reap()).isEqualTo(9);
		assertThat(told).containsExactly(9);
		assertThat(keys(TABLE)).containsExactly("lease-live");
		assertThat(keys(TABLE + "_rw")).containsExactly("read-live");
		assertThat(keys(TABLE + "_fair_queue")).containsExactly("fair-live");
		assertThat(reaper.reap()).isZero();
		assertThat(told).containsExactly(9);
	}

	@Test
	void startedItRunsEveryIntervalOnTheEnginesSchedulerUntilStopped() throws Exception {
		LockEngine engine = new LockEngine(this.repository,
				LockEngineSettings.of(new Backoff(Duration.ofMillis(2), Duration.ofMillis(50))));
		LockReaper reaper = new LockReaper(this.repository, 100, Duration.ofMillis(20), engine.scheduler());
		CountDownLatch reaped = new CountDownLatch(1);
		AtomicReference<String> thread = new AtomicReference<>();
		reaper.addListener(new LockListener() {
			@Override
			public void reaped(int rows) {
				thread.set(Thread.currentThread().getName());
				reaped.countDown();
			}
		});
		try {
			reaper.start();
			assertThat(reaper.isRunning()).isTrue();
			this.repository.fairQueue().orElseThrow().enqueue("fair-expired", "c", EXPIRED);
			assertThat(reaped.await(30, TimeUnit.SECONDS)).isTrue();
			assertThat(thread.get()).startsWith("db-lock-reaper-");
			assertThat(keys(TABLE + "_fair_queue")).isEmpty();
		}
		finally {
			engine.close();
			assertThat(engine.scheduler().isTerminated()).isFalse();
			reaper.stop();
		}
		assertThat(reaper.isRunning()).isFalse();
		assertThat(engine.scheduler().isTerminated()).isTrue();
	}

	private void awaitExpired(int each) {
		String now = database().dialect(this.dataSource).now();
		await().atMost(Duration.ofSeconds(10))
			.until(() -> List.of(TABLE, TABLE + "_rw", TABLE + "_fair_queue")
				.stream()
				.allMatch((table) -> this.jdbc.queryForObject(
						"SELECT COUNT(*) FROM " + table + " WHERE expires_at <= " + now, Integer.class) == each));
	}

	private List<String> keys(String table) {
		return this.jdbc.queryForList("SELECT lock_key FROM " + table, String.class);
	}

}
