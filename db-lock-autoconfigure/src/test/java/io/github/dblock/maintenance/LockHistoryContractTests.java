package io.github.dblock.maintenance;

import io.github.dblock.LockRequest;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

import com.zaxxer.hikari.HikariDataSource;
import io.github.dblock.DbLockMode;
import io.github.dblock.LockHandle;
import io.github.dblock.engine.Backoff;
import io.github.dblock.engine.LockEngine;
import io.github.dblock.engine.LockEngineSettings;
import io.github.dblock.engine.LockListener;
import io.github.dblock.jdbc.JdbcConnectionLockRepository;
import io.github.dblock.jdbc.JdbcLockHistoryRepository;
import io.github.dblock.jdbc.JdbcLockRepository;
import io.github.dblock.jdbc.LockHistoryRepository;
import io.github.dblock.testsupport.Concurrently;
import io.github.dblock.testsupport.TestDatabase;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.support.JdbcTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The lock log and the recovery job on a real database: every hold one row with the right
 * outcome (released, lost, expired, recovered), one node at a time running the job, old
 * rows deleted. Two engines over one data source play two nodes.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class LockHistoryContractTests {

	private static final Backoff BACKOFF = new Backoff(Duration.ofMillis(2), Duration.ofMillis(50));

	private static final Duration PATIENCE = Duration.ofSeconds(20);

	/** A fencing token is the database's token shifted left by these bits plus the hand-off count ({@link LockEngine}). */
	private static final int HANDOFF_BITS = 16;

	private HikariDataSource dataSource;

	private JdbcTemplate jdbc;

	private JdbcLockRepository leases;

	private LockHistoryRepository historyRepository;

	private LockEngine nodeA;

	private LockEngine nodeB;

	private LockHistory history;

	/** Every hold the engines reported, to compare with the log. */
	private final Set<String> holds = ConcurrentHashMap.newKeySet();

	protected abstract TestDatabase database();

	/** Whether the database has named locks. */
	protected boolean hasNamedLocks() {
		return true;
	}

	@BeforeAll
	void createDataSource() {
		this.dataSource = database().dataSource(16);
		this.jdbc = new JdbcTemplate(this.dataSource);
		this.leases = new JdbcLockRepository(this.dataSource, database().dialect(this.dataSource));
		this.historyRepository = new JdbcLockHistoryRepository(this.leases.connections());
	}

	@AfterAll
	void closeDataSource() {
		if (this.dataSource != null) {
			this.dataSource.close();
		}
	}

	@BeforeEach
	void createEngines() {
		this.jdbc.update("DELETE FROM " + TestDatabase.TABLE);
		// the recovery frees whatever hold in these tables is older than its limit: none of another test's
		this.jdbc.update("DELETE FROM " + TestDatabase.TABLE + "_rw");
		this.jdbc.update("DELETE FROM " + TestDatabase.TABLE + "_rw_intents");
		this.jdbc.update("DELETE FROM " + TestDatabase.TABLE + "_history");
		this.holds.clear();
		this.nodeA = engine();
		this.nodeB = engine();
		this.history = new LockHistory(this.historyRepository, Duration.ofMinutes(1), this.nodeA.scheduler());
		LockListener counter = new LockListener() {
			@Override
			public void holdStarted(String key, DbLockMode mode, String owner, @Nullable Long token) {
				LockHistoryContractTests.this.holds.add(key + "|" + owner);
			}
		};
		for (LockEngine node : List.of(this.nodeA, this.nodeB)) {
			node.addListener(this.history);
			node.addListener(counter);
		}
	}

	private LockEngine engine() {
		return new LockEngine(this.leases, new JdbcConnectionLockRepository(this.leases.connections(), this.dataSource),
				LockEngineSettings.of(BACKOFF));
	}

	@AfterEach
	void closeEngines() {
		this.nodeA.close();
		this.nodeB.close();
		this.history.stop();
	}

	private static LockRequest request(DbLockMode mode, String key, Duration wait) {
		return new LockRequest(key, wait, Duration.ofSeconds(30), true, Duration.ZERO, mode);
	}

	private List<Map<String, Object>> rows() {
		return this.jdbc.queryForList("SELECT lock_key, mode, owner, token, acquired_at, released_at, outcome FROM "
				+ TestDatabase.TABLE + "_history ORDER BY id");
	}

	private Map<String, Object> onlyRow(String key) {
		List<Map<String, Object>> rows = this.jdbc.queryForList(
				"SELECT mode, owner, token, released_at, outcome FROM " + TestDatabase.TABLE + "_history WHERE lock_key = ?",
				key);
		assertThat(rows).hasSize(1);
		return rows.get(0);
	}

	@Test
	void everyHoldOfTwoNodesIsOneReleasedRowWithItsToken() throws Exception {
		int threads = 6;
		int cycles = 20;
		Set<Long> tokens = ConcurrentHashMap.newKeySet();
		Concurrently.run(threads, (thread) -> {
			LockEngine node = (thread % 2 == 0) ? this.nodeA : this.nodeB;
			for (int i = 0; i < cycles; i++) {
				try (LockHandle lock = node.acquire(request(DbLockMode.LEASE, "key-" + (i % 3), PATIENCE))) {
					tokens.add(lock.fencingToken());
					// a re-entry is part of the hold: no row of its own
					node.acquire(request(DbLockMode.LEASE, "key-" + (i % 3), PATIENCE)).close();
				}
			}
		});
		this.history.flush();
		List<Map<String, Object>> rows = rows();
		// threads of one node may hand a hold on: one row per hold, never one per call
		assertThat(rows).hasSize(this.holds.size());
		assertThat(rows).extracting((row) -> row.get("lock_key") + "|" + row.get("owner"))
			.containsExactlyInAnyOrderElementsOf(this.holds);
		assertThat(rows).extracting((row) -> row.get("outcome")).containsOnly("released");
		assertThat(rows).extracting((row) -> row.get("mode")).containsOnly("LEASE");
		// a row's token is its first holder's; the threads it was handed on to had the next ones
		assertThat(rows).extracting((row) -> ((Number) row.get("token")).longValue())
			.doesNotHaveDuplicates()
			.allSatisfy((token) -> assertThat(tokens).contains(token))
			.containsExactlyInAnyOrderElementsOf(
					tokens.stream().map((token) -> token >> HANDOFF_BITS << HANDOFF_BITS).distinct().toList());
		assertThat(rows).allSatisfy((row) -> assertThat(row.get("released_at")).isNotNull());
	}

	@Test
	void transactionAndNamedHoldsAreLoggedToo() {
		TransactionTemplate transactions = new TransactionTemplate(new JdbcTransactionManager(this.dataSource));
		transactions.executeWithoutResult((status) -> this.nodeA.acquire(request(DbLockMode.TRANSACTION, "tx", PATIENCE)));
		if (hasNamedLocks()) {
			this.nodeA.acquire(request(DbLockMode.NAMED, "named", PATIENCE)).close();
		}
		this.history.flush();
		Map<String, Object> transaction = onlyRow("tx");
		assertThat(transaction.get("mode")).isEqualTo("TRANSACTION");
		assertThat(transaction.get("outcome")).isEqualTo("released");
		// drawn only when read: none known when the hold began
		assertThat(transaction.get("token")).isNull();
		if (hasNamedLocks()) {
			assertThat(onlyRow("named").get("mode")).isEqualTo("NAMED");
			assertThat(onlyRow("named").get("outcome")).isEqualTo("released");
		}
	}

	@Test
	void latestReadsTheLastHoldsNewestFirstOpenOrClosed() {
		TransactionTemplate transactions = new TransactionTemplate(new JdbcTransactionManager(this.dataSource));
		transactions.executeWithoutResult((status) -> this.nodeA.acquire(request(DbLockMode.TRANSACTION, "tx", PATIENCE)));
		LockHandle first = this.nodeA.acquire(request(DbLockMode.LEASE, "first", PATIENCE));
		long firstToken = first.fencingToken();
		first.close();
		try (LockHandle open = this.nodeB.acquire(request(DbLockMode.LEASE, "open", PATIENCE))) {
			this.history.flush();
			List<LockHistoryRepository.Entry> latest = this.historyRepository.latest(10);
			assertThat(latest).extracting(LockHistoryRepository.Entry::key).containsExactly("open", "first", "tx");
			assertThat(latest.get(0)).satisfies((entry) -> {
				assertThat(entry.mode()).isEqualTo("LEASE");
				assertThat(entry.token()).isEqualTo(open.fencingToken());
				assertThat(entry.owner()).isNotBlank();
				assertThat(entry.releasedAt()).isNull();
				assertThat(entry.outcome()).isNull();
			});
			assertThat(latest.get(1)).satisfies((entry) -> {
				assertThat(entry.token()).isEqualTo(firstToken);
				assertThat(entry.outcome()).isEqualTo(LockHistoryRepository.Outcome.RELEASED);
				assertThat(entry.releasedAt()).isAfterOrEqualTo(entry.acquiredAt());
			});
			assertThat(latest.get(2)).satisfies((entry) -> {
				assertThat(entry.mode()).isEqualTo("TRANSACTION");
				assertThat(entry.token()).isNull();
				assertThat(entry.outcome()).isEqualTo(LockHistoryRepository.Outcome.RELEASED);
			});
			assertThat(this.historyRepository.latest(2)).extracting(LockHistoryRepository.Entry::key)
				.containsExactly("open", "first");
		}
	}

	@Test
	void aHoldWrittenBeforeItEndsIsClosedLater() {
		LockHandle lock = this.nodeA.acquire(request(DbLockMode.LEASE, "open", PATIENCE));
		this.history.flush();
		assertThat(onlyRow("open").get("outcome")).isNull();
		assertThat(onlyRow("open").get("released_at")).isNull();
		lock.close();
		this.history.flush();
		assertThat(onlyRow("open").get("outcome")).isEqualTo("released");
	}

	@Test
	void aHoldWhoseRowWasDeletedUnderItIsLost() {
		LockHandle lock = this.nodeA.acquire(request(DbLockMode.LEASE, "deleted", PATIENCE));
		this.jdbc.update("DELETE FROM " + TestDatabase.TABLE);
		lock.close();
		this.history.flush();
		assertThat(onlyRow("deleted").get("outcome")).isEqualTo("lost");
	}

	@Test
	void aHoldWhoseLeaseRanOutIsClosedAsExpiredByTheRecoveryJob() {
		// a lease of its own length, not renewed: its holder stalls past it, as a crashed one would
		LockHandle stalled = this.nodeA
			.acquire(new LockRequest("stalled", Duration.ZERO, Duration.ofMillis(300), false, Duration.ZERO));
		this.history.flush();
		LockRecovery recovery = new LockRecovery(this.nodeB, this.historyRepository, null, Duration.ofDays(7), Duration.ofMinutes(1));
		assertThat(expiredWithin(recovery, PATIENCE)).isTrue();
		assertThat(onlyRow("stalled").get("outcome")).isEqualTo("expired");
		// the stalled holder's late end changes nothing: the row was closed already
		stalled.close();
		this.history.flush();
		assertThat(onlyRow("stalled").get("outcome")).isEqualTo("expired");
		// a hold whose row is gone (taken over, reaped) is closed once it has settled
		LockHandle reaped = this.nodeA
			.acquire(new LockRequest("reaped", Duration.ZERO, Duration.ofMillis(300), false, Duration.ZERO));
		this.history.flush();
		this.jdbc.update("DELETE FROM " + TestDatabase.TABLE + " WHERE lock_key = 'reaped'");
		recovery.settle = Duration.ZERO;
		assertThat(expiredWithin(recovery, PATIENCE)).isTrue();
		assertThat(onlyRow("reaped").get("outcome")).isEqualTo("expired");
		reaped.close();
		recovery.stop();
	}

	/** Runs the job until it closes a row as expired, or the patience runs out. */
	private static boolean expiredWithin(LockRecovery recovery, Duration patience) {
		await().atMost(patience)
			.pollInterval(Duration.ofMillis(50))
			.until(() -> recovery.run().map(LockRecovery.Run::expired).orElse(0), (expired) -> expired > 0);
		return true;
	}

	/** Runs the job until it frees a hold, or the patience runs out; what it freed. */
	private static int recoveredWithin(LockRecovery recovery, Duration patience) {
		return await().atMost(patience)
			.pollInterval(Duration.ofMillis(50))
			.until(() -> recovery.run().map(LockRecovery.Run::recovered).orElse(0), (recovered) -> recovered > 0);
	}

	@Test
	void aHoldOlderThanTheLimitIsFreedAndLoggedAsRecovered() {
		LockHandle overlong = this.nodeA.acquire(request(DbLockMode.LEASE, "overlong", PATIENCE));
		long token = overlong.fencingToken();
		this.history.flush();
		LockRecovery recovery = new LockRecovery(this.nodeB, this.historyRepository, Duration.ofMillis(200),
				Duration.ofDays(7), Duration.ofMinutes(1));
		assertThat(recoveredWithin(recovery, PATIENCE)).isEqualTo(1);
		// freed: another node takes it at once, with a larger token
		try (LockHandle next = this.nodeB.acquire(request(DbLockMode.LEASE, "overlong", Duration.ZERO))) {
			assertThat(next.fencingToken()).isGreaterThan(token);
		}
		// the old holder finds it lost; the log keeps what the job wrote
		overlong.close();
		this.history.flush();
		List<Map<String, Object>> rows = this.jdbc.queryForList("SELECT token, outcome FROM " + TestDatabase.TABLE
				+ "_history WHERE lock_key = 'overlong' ORDER BY token");
		assertThat(rows).extracting((row) -> row.get("outcome")).containsExactly("recovered", "released");
		recovery.stop();
	}

	@Test
	void aHotKeyHandedOnAmongThreadsForLongerThanTheLimitIsNotRecoveredButAStuckHoldStillIs() throws Exception {
		Duration maxHold = Duration.ofSeconds(1);
		Duration lease = Duration.ofSeconds(2);
		// renewed every 200 ms: a hand-on's new start reaches the database at most that (and a tick) later
		LockEngine hot = new LockEngine(this.leases, new JdbcConnectionLockRepository(this.leases.connections(), this.dataSource),
				LockEngineSettings.of(BACKOFF).withRenewInterval(Duration.ofMillis(200)));
		Map<String, AtomicInteger> lost = new ConcurrentHashMap<>();
		hot.addListener(new LockListener() {
			@Override
			public void lost(String key, DbLockMode mode) {
				lost.computeIfAbsent(key, (k) -> new AtomicInteger()).incrementAndGet();
			}
		});
		LockRecovery recovery = new LockRecovery(this.nodeB, this.historyRepository, maxHold, null, Duration.ofMinutes(1));
		AtomicInteger recovered = new AtomicInteger();
		ScheduledExecutorService job = Executors.newSingleThreadScheduledExecutor();
		job.scheduleWithFixedDelay(() -> recovery.run().ifPresent((run) -> recovered.addAndGet(run.recovered())), 20,
				20, TimeUnit.MILLISECONDS);
		try {
			// three times the limit: renewed leases handed on as they are, fixed ones extended at each hand-on
			long end = System.nanoTime() + maxHold.multipliedBy(3).toNanos();
			Map<String, AtomicInteger> handedOn = new ConcurrentHashMap<>();
			Map<String, Set<Long>> databaseTokens = new ConcurrentHashMap<>();
			Concurrently.run(8, (thread) -> {
				boolean renewed = thread % 2 == 0;
				String key = renewed ? "hot-renewed" : "hot-fixed";
				while (System.nanoTime() - end < 0) {
					try (LockHandle held = hot.acquire(new LockRequest(key, PATIENCE, lease, renewed, Duration.ZERO))) {
						if ((held.fencingToken() & ((1 << HANDOFF_BITS) - 1)) != 0) {
							handedOn.computeIfAbsent(key, (k) -> new AtomicInteger()).incrementAndGet();
						}
						databaseTokens.computeIfAbsent(key, (k) -> ConcurrentHashMap.newKeySet())
							.add(held.fencingToken() >> HANDOFF_BITS);
						// the work done under the lock, much shorter than the limit
						LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
					}
				}
			});
			int chainRecovered = recovered.get();
			System.out.println(getClass().getSimpleName() + " hot keys handed on for " + maxHold.multipliedBy(3)
					+ " (max-hold " + maxHold + "): recovered=" + chainRecovered + ", lost=" + lost + ", handedOn="
					+ handedOn + ", database leases=" + databaseTokens.entrySet()
						.stream()
						.map((entry) -> entry.getKey() + "=" + entry.getValue().size())
						.toList());
			assertThat(handedOn.keySet()).containsExactlyInAnyOrder("hot-renewed", "hot-fixed");
			assertThat(chainRecovered).isZero();
			assertThat(lost).isEmpty();

			// a hold handed on once and then kept past the limit is still freed: its start is written once
			ExecutorService stuckThread = Executors.newSingleThreadExecutor();
			try {
				LockHandle first = hot.acquire(new LockRequest("stuck", PATIENCE, lease, true, Duration.ZERO));
				Future<LockHandle> next = stuckThread
					.submit(() -> hot.acquire(new LockRequest("stuck", PATIENCE, lease, true, Duration.ZERO)));
				await().atMost(PATIENCE).until(() -> hot.localWaiters() == 1);
				first.close();
				LockHandle stuck = next.get(PATIENCE.toMillis(), TimeUnit.MILLISECONDS);
				assertThat(stuck.fencingToken() & ((1 << HANDOFF_BITS) - 1)).isEqualTo(1);
				await().atMost(PATIENCE).until(() -> !stuck.isHeld());
				System.out.println(getClass().getSimpleName() + " stuck hold: recovered="
						+ (recovered.get() - chainRecovered) + ", lost=" + lost);
				assertThat(recovered.get() - chainRecovered).isEqualTo(1);
				assertThat(lost).containsOnlyKeys("stuck");
				stuckThread.submit(stuck::close).get();
			}
			finally {
				stuckThread.shutdownNow();
			}
		}
		finally {
			job.shutdownNow();
			job.awaitTermination(PATIENCE.toMillis(), TimeUnit.MILLISECONDS);
			recovery.stop();
			hot.close();
		}
	}

	@Test
	void readAndWriteHoldsAreLoggedAndAnOverlongWriterIsRecovered() {
		this.nodeA.acquire(request(DbLockMode.READ, "shared", PATIENCE)).close();
		LockHandle writer = this.nodeA.acquire(request(DbLockMode.WRITE, "written", PATIENCE));
		LockRecovery recovery = new LockRecovery(this.nodeB, this.historyRepository, Duration.ofMillis(200),
				Duration.ofDays(7), Duration.ofMinutes(1));
		try {
			this.history.flush();
			assertThat(onlyRow("shared").get("mode")).isEqualTo("READ");
			assertThat(onlyRow("shared").get("outcome")).isEqualTo("released");
			assertThat(recoveredWithin(recovery, PATIENCE)).isEqualTo(1);
			// the writer's intent went with its row: a reader of another node gets in at once
			try (LockHandle reader = this.nodeB.acquire(request(DbLockMode.READ, "written", Duration.ZERO))) {
				assertThat(reader.isHeld()).isTrue();
			}
		}
		finally {
			// never left open on the test's thread, whatever failed
			writer.close();
		}
		this.history.flush();
		assertThat(this.jdbc.queryForList("SELECT mode, outcome FROM " + TestDatabase.TABLE
				+ "_history WHERE lock_key = 'written' ORDER BY id"))
			.extracting((row) -> row.get("mode") + "=" + row.get("outcome"))
			.containsExactly("WRITE=recovered", "READ=released");
		recovery.stop();
	}

	@Test
	void fairHoldsAreLoggedWithTheirTicket() {
		long ticket;
		try (LockHandle turn = this.nodeA.acquire(request(DbLockMode.FAIR, "turns", PATIENCE))) {
			ticket = turn.fencingToken();
		}
		this.history.flush();
		Map<String, Object> row = onlyRow("turns");
		assertThat(row.get("mode")).isEqualTo("FAIR");
		assertThat(row.get("outcome")).isEqualTo("released");
		assertThat(((Number) row.get("token")).longValue()).isEqualTo(ticket);
	}

	@Test
	void semaphorePermitsAreLoggedUnderTheirPermitKeyAndAnExpiredOneIsClosed() {
		LockHandle stalled = this.nodeA.acquire(new LockRequest("permits", Duration.ZERO, Duration.ofMillis(300), false,
				Duration.ZERO, DbLockMode.SEMAPHORE, 2));
		this.history.flush();
		Map<String, Object> row = onlyRow(stalled.key());
		assertThat(row.get("mode")).isEqualTo("SEMAPHORE");
		assertThat(stalled.key()).startsWith("permits#permit-");
		LockRecovery recovery = new LockRecovery(this.nodeB, this.historyRepository, null, Duration.ofDays(7),
				Duration.ofMinutes(1));
		assertThat(expiredWithin(recovery, PATIENCE)).isTrue();
		assertThat(onlyRow(stalled.key()).get("outcome")).isEqualTo("expired");
		stalled.close();
		recovery.stop();
	}

	@Test
	void oneNodeAtATimeRunsTheJob() {
		LockRecovery recoveryA = new LockRecovery(this.nodeA, this.historyRepository, Duration.ofHours(1),
				Duration.ofDays(7), Duration.ofMinutes(1));
		LockRecovery recoveryB = new LockRecovery(this.nodeB, this.historyRepository, Duration.ofHours(1),
				Duration.ofDays(7), Duration.ofMinutes(1));
		try (LockHandle running = this.nodeA.acquire(request(DbLockMode.LEASE, LockRecovery.KEY, Duration.ZERO))) {
			assertThat(recoveryB.run()).isEmpty();
		}
		assertThat(recoveryB.run()).isPresent();
		assertThat(recoveryA.run()).isPresent();
		recoveryA.stop();
		recoveryB.stop();
		// the job's own lock is not in the log
		this.history.flush();
		assertThat(rows()).isEmpty();
	}

	@Test
	void rowsPastTheRetentionAreDeleted() {
		Instant now = Instant.now();
		this.historyRepository.write(List.of(
				new LockHistoryRepository.Entry("old", "LEASE", "someone#1", 1L, now.minus(Duration.ofDays(8)),
						now.minus(Duration.ofDays(8)), LockHistoryRepository.Outcome.RELEASED),
				new LockHistoryRepository.Entry("recent", "LEASE", "someone#2", 2L, now.minus(Duration.ofDays(6)),
						now.minus(Duration.ofDays(6)), LockHistoryRepository.Outcome.RELEASED)),
				List.of());
		LockRecovery recovery = new LockRecovery(this.nodeA, this.historyRepository, null, Duration.ofDays(7), Duration.ofMinutes(1));
		assertThat(recovery.run()).map(LockRecovery.Run::deleted).contains(1);
		assertThat(rows()).extracting((row) -> row.get("lock_key")).containsExactly("recent");
		recovery.stop();
	}

	@Test
	void withoutTheLogTheJobStillFreesOverlongHoldsAndTouchesNoRow() {
		LockHandle overlong = this.nodeA.acquire(request(DbLockMode.LEASE, "no-log", PATIENCE));
		LockRecovery recovery = new LockRecovery(this.nodeB, this.historyRepository, Duration.ofMillis(100), null, Duration.ofMinutes(1));
		assertThat(recoveredWithin(recovery, PATIENCE)).isEqualTo(1);
		assertThat(this.leases.rows(10)).isEmpty();
		overlong.close();
		recovery.stop();
	}

}
