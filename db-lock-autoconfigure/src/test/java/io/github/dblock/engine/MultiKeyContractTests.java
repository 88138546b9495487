package io.github.dblock.engine;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLongArray;

import com.zaxxer.hikari.HikariDataSource;
import io.github.dblock.DbLockContext;
import io.github.dblock.DbLockException;
import io.github.dblock.DbLockMode;
import io.github.dblock.LockAcquisitionException;
import io.github.dblock.LockHandle;
import io.github.dblock.LockRequest;
import io.github.dblock.jdbc.JdbcLockRepository;
import io.github.dblock.testsupport.Concurrently;
import io.github.dblock.testsupport.TestDatabase;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * The contract of several keys taken at once ({@link LockEngine#acquireAll}) on a real
 * database, with real threads; two engines over one data source play two JVMs.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class MultiKeyContractTests {

	private static final Duration LONG_WAIT = Duration.ofSeconds(60);

	private static final Duration LEASE = Duration.ofSeconds(30);

	private static final Backoff BACKOFF = new Backoff(Duration.ofMillis(2), Duration.ofMillis(50));

	private HikariDataSource dataSource;

	private JdbcTemplate jdbc;

	private LockEngine nodeA;

	private LockEngine nodeB;

	protected abstract TestDatabase database();

	@BeforeAll
	void createDataSource() {
		this.dataSource = database().dataSource(24);
		this.jdbc = new JdbcTemplate(this.dataSource);
	}

	@AfterAll
	void closeDataSource() {
		if (this.dataSource != null) {
			this.dataSource.close();
		}
	}

	@BeforeEach
	void createEngines() {
		JdbcLockRepository leases = new JdbcLockRepository(this.dataSource, database().dialect(this.dataSource));
		this.nodeA = new LockEngine(leases, LockEngineSettings.of(BACKOFF));
		this.nodeB = new LockEngine(leases, LockEngineSettings.of(BACKOFF));
	}

	@AfterEach
	void closeEngines() {
		this.nodeA.close();
		this.nodeB.close();
	}

	private static List<LockRequest> requests(Duration wait, String... keys) {
		List<LockRequest> requests = new ArrayList<>();
		for (String key : keys) {
			requests.add(LockRequest.of(key, wait, LEASE).withWait(wait));
		}
		return requests;
	}

	private static List<LockRequest> renewed(Duration wait, String... keys) {
		List<LockRequest> requests = new ArrayList<>();
		for (String key : keys) {
			requests.add(new LockRequest(key, wait, LEASE, true, Duration.ZERO));
		}
		return requests;
	}

	private boolean rowExists(String key) {
		return this.jdbc.queryForObject("SELECT COUNT(*) FROM " + TestDatabase.TABLE + " WHERE lock_key = ?",
				Integer.class, key) == 1;
	}

	@Test
	void everyKeyIsHeldWithATokenOfItsOwnAndReleasedTogether() {
		LockHandle both;
		try (LockHandle handle = this.nodeA.acquireAll(requests(LONG_WAIT, "to", "from"))) {
			both = handle;
			assertThat(handle.keys()).containsExactly("from", "to");
			assertThat(handle.key()).isEqualTo("from");
			assertThat(handle.fencingToken()).isEqualTo(handle.fencingToken("from"));
			assertThat(handle.fencingToken("to")).isNotEqualTo(handle.fencingToken("from"));
			assertThatExceptionOfType(IllegalArgumentException.class).isThrownBy(() -> handle.fencingToken("other"));
			assertThat(handle.isHeld()).isTrue();
			assertThat(rowExists("from") && rowExists("to")).isTrue();
			assertThat(DbLockContext.all()).extracting(LockHandle::key).containsExactly("from", "to");
			assertThat(this.nodeB.tryAcquire(LockRequest.of("to", Duration.ZERO, LEASE))).isEmpty();
		}
		assertThat(both.isHeld()).isFalse();
		assertThat(rowExists("from") || rowExists("to")).isFalse();
		assertThat(DbLockContext.all()).isEmpty();
	}

	@Test
	void aKeyThatStaysHeldReleasesTheKeysAlreadyTaken() {
		try (LockHandle other = this.nodeB.acquire(LockRequest.of("m-2", LONG_WAIT, LEASE))) {
			assertThatExceptionOfType(LockAcquisitionException.class)
				.isThrownBy(() -> this.nodeA.acquireAll(requests(Duration.ofMillis(300), "m-2", "m-1", "m-3")))
				.withMessageContaining("m-2");
			// m-1 was taken first (key order) and given back; m-3 was never asked for
			assertThat(rowExists("m-1")).isFalse();
			assertThat(rowExists("m-3")).isFalse();
			assertThat(DbLockContext.all()).containsExactly(other);
		}
	}

	@Test
	void keysGivenBackInsideATransactionAreFreeBeforeItsCommit() {
		TransactionTemplate transactions = new TransactionTemplate(new DataSourceTransactionManager(this.dataSource));
		try (LockHandle other = this.nodeB.acquire(LockRequest.of("tx-2", LONG_WAIT, LEASE))) {
			transactions.executeWithoutResult((status) -> {
				assertThatExceptionOfType(LockAcquisitionException.class)
					.isThrownBy(() -> this.nodeA.acquireAll(requests(Duration.ofMillis(200), "tx-1", "tx-2")));
				// nothing was done under tx-1: it is free now, not at the commit
				assertThat(rowExists("tx-1")).isFalse();
				Optional<LockHandle> free = this.nodeB.tryAcquire(LockRequest.of("tx-1", Duration.ZERO, LEASE));
				assertThat(free).isPresent();
				free.get().close();
			});
		}
	}

	@Test
	void aKeyTheThreadReleasedInItsTransactionStaysTakenUntilTheCommitWhenAFailedCallTookItAgain() {
		TransactionTemplate transactions = new TransactionTemplate(new DataSourceTransactionManager(this.dataSource));
		try (LockHandle other = this.nodeB.acquire(LockRequest.of("w-2", LONG_WAIT, LEASE))) {
			transactions.executeWithoutResult((status) -> {
				// work under w-1, released at the commit
				this.nodeA.acquire(LockRequest.of("w-1", LONG_WAIT, LEASE)).close();
				assertThatExceptionOfType(LockAcquisitionException.class)
					.isThrownBy(() -> this.nodeA.acquireAll(requests(Duration.ofMillis(200), "w-1", "w-2")));
				assertThat(rowExists("w-1")).isTrue();
			});
		}
		assertThat(rowExists("w-1")).isFalse();
	}

	@Test
	void everyKeyIsCheckedBeforeAnyIsTaken() {
		assertThatExceptionOfType(DbLockException.class)
			.isThrownBy(() -> this.nodeA.acquireAll(requests(LONG_WAIT, "c-1", "c-2#permit-0")))
			.withMessageContaining("semaphore's permit");
		assertThat(rowExists("c-1")).isFalse();
		assertThatExceptionOfType(DbLockException.class)
			.isThrownBy(() -> this.nodeA.acquireAll(List.of(new LockRequest("s", LONG_WAIT, LEASE, true, Duration.ZERO,
					DbLockMode.SEMAPHORE, 2))))
			.withMessageContaining("SEMAPHORE");
	}

	@Test
	void aKeyNamedTwiceIsTakenOnce() {
		try (LockHandle handle = this.nodeA.acquireAll(requests(LONG_WAIT, "twice", "twice"))) {
			assertThat(handle.keys()).containsExactly("twice");
		}
		assertThat(rowExists("twice")).isFalse();
	}

	@Test
	void noKeyOrTheTransactionModeIsRefused() {
		assertThatExceptionOfType(DbLockException.class).isThrownBy(() -> this.nodeA.acquireAll(List.of()));
		assertThatExceptionOfType(DbLockException.class)
			.isThrownBy(() -> this.nodeA.acquireAll(List.of(new LockRequest("t", LONG_WAIT, LEASE, false, Duration.ZERO,
					DbLockMode.TRANSACTION))))
			.withMessageContaining("TRANSACTION");
	}

	@Test
	void theHandleIsLostOnceAnyKeyIsLost() {
		List<LockRequest> requests = List.of(LockRequest.of("lost-1", LONG_WAIT, LEASE),
				LockRequest.of("lost-2", LONG_WAIT, Duration.ofMillis(300)));
		LockHandle handle = this.nodeA.acquireAll(requests);
		await().atMost(Duration.ofSeconds(30)).until(() -> !handle.isHeld());
		assertThat(handle.lostSince()).isPresent();
		handle.close();
		assertThat(rowExists("lost-1")).isFalse();
	}

	@Test
	void transfersLockingBothAccountsInEitherOrderNeverOverlapOrDeadlock() throws Exception {
		int accounts = 5;
		AtomicLongArray balances = new AtomicLongArray(accounts);
		for (int i = 0; i < accounts; i++) {
			balances.set(i, 1_000);
		}
		AtomicIntegerArray inside = new AtomicIntegerArray(accounts);
		AtomicInteger overlaps = new AtomicInteger();
		AtomicInteger transfers = new AtomicInteger();
		Concurrently.run(8, (thread) -> {
			LockEngine engine = (thread % 2 == 0) ? this.nodeA : this.nodeB;
			ThreadLocalRandom random = ThreadLocalRandom.current();
			for (int i = 0; i < 40; i++) {
				int from = random.nextInt(accounts);
				int to = (from + 1 + random.nextInt(accounts - 1)) % accounts;
				try (LockHandle both = engine.acquireAll(renewed(LONG_WAIT, "account:" + from, "account:" + to))) {
					for (int account : new int[] { from, to }) {
						if (inside.incrementAndGet(account) > 1) {
							overlaps.incrementAndGet();
						}
					}
					long amount = random.nextInt(1, 50);
					// a read-modify-write that a second holder would break
					long fromBalance = balances.get(from);
					long toBalance = balances.get(to);
					Thread.yield();
					balances.set(from, fromBalance - amount);
					balances.set(to, toBalance + amount);
					inside.decrementAndGet(from);
					inside.decrementAndGet(to);
				}
				transfers.incrementAndGet();
			}
		});
		long total = 0;
		for (int i = 0; i < accounts; i++) {
			total += balances.get(i);
		}
		assertThat(overlaps).hasValue(0);
		assertThat(transfers).hasValue(8 * 40);
		assertThat(total).isEqualTo(accounts * 1_000L);
	}

}
