package io.github.dblock.engine;

import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.github.dblock.DbLockException;
import io.github.dblock.DbLockMode;
import io.github.dblock.LockHandle;
import io.github.dblock.LockRequest;
import io.github.dblock.jdbc.JdbcLockRepository;
import io.github.dblock.testsupport.TestDatabase;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * The wake-ups of lease-mode and fair-mode waiters on PostgreSQL ({@link WakeUps},
 * migrations V11's and V12's triggers): two engines over one table play two nodes, the
 * waiter's with a back-off longer than its wait, so that it takes the key only if the
 * other's release wakes it. Each node's
 * connections carry an application name of their own, by which the test sees its listening
 * session in {@code pg_stat_activity}.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PostgreSqlWakeUpTests {

	private static final String CHANNEL = '"' + TestDatabase.TABLE + '"';

	/** Longer than every wait: a waiter that is not woken asks once, then at the end of its wait. */
	private static final Backoff NEVER_AGAIN = new Backoff(Duration.ofMinutes(10), Duration.ofMinutes(10));

	private static final Duration LEASE = Duration.ofSeconds(30);

	private static final String FAIR_QUEUE = TestDatabase.TABLE + "_fair_queue";

	/**
	 * A wait that ends long after the test's {@code get(30 s)}: a waiter that is not woken
	 * asks again only at its end, so that the test fails instead.
	 */
	private static final Duration UNTIL_WOKEN = Duration.ofMinutes(3);

	private HikariDataSource holderPool;

	private HikariDataSource waiterPool;

	private JdbcTemplate jdbc;

	private LockEngine holder;

	private LockEngine waiter;

	private JdbcLockRepository waiterRepository;

	private final ExecutorService threads = Executors.newCachedThreadPool();

	@BeforeAll
	void createPools() {
		// migrates the table, V11's trigger included
		TestDatabase.POSTGRESQL.dataSource(2).close();
		this.holderPool = pool("db-lock-wake-holder");
		this.waiterPool = pool("db-lock-wake-waiter");
		this.jdbc = new JdbcTemplate(this.holderPool);
	}

	@AfterAll
	void closePools() {
		this.threads.shutdownNow();
		this.holderPool.close();
		this.waiterPool.close();
	}

	@BeforeEach
	void createEngines() {
		this.jdbc.update("DELETE FROM " + TestDatabase.TABLE);
		this.jdbc.update("DELETE FROM " + FAIR_QUEUE);
		this.holder = new LockEngine(new JdbcLockRepository(this.holderPool, dialect()), LockEngineSettings.of(NEVER_AGAIN));
		this.waiterRepository = new JdbcLockRepository(this.waiterPool, dialect());
		this.waiter = new LockEngine(this.waiterRepository, LockEngineSettings.of(NEVER_AGAIN));
	}

	@AfterEach
	void closeEngines() {
		this.holder.close();
		this.waiter.close();
	}

	@Test
	void aWaiterOfAnotherNodeTakesTheKeyWhenItIsReleasedNotAtTheEndOfItsBackOff() throws Exception {
		LockHandle held = this.holder.acquire(request("released", Duration.ZERO));
		Future<LockHandle> waiting = waitFor("released", UNTIL_WOKEN);
		int listener = listeningSession();
		held.close();
		try (LockHandle taken = waiting.get(30, TimeUnit.SECONDS)) {
			assertThat(taken.isHeld()).isTrue();
			assertThat(taken.fencingToken()).isGreaterThan(held.fencingToken());
		}
		assertThat(listener).isPositive();
	}

	@Test
	void aFairWaiterOfAnotherNodeTakesTheKeyWhenTheHeadLeavesNotAtTheEndOfItsBackOff() throws Exception {
		LockHandle held = this.holder.acquire(fair("fair-released", Duration.ZERO));
		CompletableFuture<LockHandle> waiting = CompletableFuture
			.supplyAsync(() -> this.waiter.acquire(fair("fair-released", UNTIL_WOKEN)), this.threads);
		// its ticket is behind the holder's, and it has asked once: listening from then on
		await().atMost(Duration.ofSeconds(20)).until(() -> tickets("fair-released") == 2);
		listeningSession();
		held.close();
		try (LockHandle taken = waiting.get(30, TimeUnit.SECONDS)) {
			assertThat(taken.isHeld()).isTrue();
			assertThat(taken.fencingToken()).isGreaterThan(held.fencingToken());
		}
	}

	@Test
	void theFairTriggerNotifiesCommittedDeletesOfAHeadFollowedByAnotherEnginesTicketAlone() throws Exception {
		try (HikariDataSource listenerPool = pool("db-lock-wake-raw"); Connection listening = listenerPool.getConnection()) {
			try (Statement statement = listening.createStatement()) {
				statement.execute("LISTEN " + CHANNEL);
			}
			enqueue("alone", 1, "host/1/a#1");
			enqueue("behind", 2, "host/1/a#2");
			enqueue("behind", 3, "host/2/b#1");
			enqueue("same-engine", 8, "host/1/a#3");
			enqueue("same-engine", 9, "host/1/a#4");
			enqueue("rolled-back", 4, "host/1/a#5");
			enqueue("rolled-back", 5, "host/2/b#2");
			enqueue("head-left", 6, "host/1/a#6");
			enqueue("head-left", 7, "host/2/b#3");
			// nothing behind it; not the head; followed by its own engine's; a head whose delete rolls back
			this.jdbc.update("DELETE FROM " + FAIR_QUEUE + " WHERE ticket = 1");
			this.jdbc.update("DELETE FROM " + FAIR_QUEUE + " WHERE ticket = 3");
			this.jdbc.update("DELETE FROM " + FAIR_QUEUE + " WHERE ticket = 8");
			try (Connection transaction = this.holderPool.getConnection()) {
				transaction.setAutoCommit(false);
				try (Statement statement = transaction.createStatement()) {
					statement.executeUpdate("DELETE FROM " + FAIR_QUEUE + " WHERE ticket = 4");
				}
				transaction.rollback();
				transaction.setAutoCommit(true);
			}
			this.jdbc.update("DELETE FROM " + FAIR_QUEUE + " WHERE ticket = 6");
			// notifications arrive in commit order: one for 'head-left' and none before it
			assertThat(told(listening)).containsExactly(TestDatabase.TABLE + ":head-left");
			try (Statement statement = listening.createStatement()) {
				statement.execute("UNLISTEN " + CHANNEL);
			}
		}
	}

	@Test
	void theFairTriggerReadsTheQueueWhateverTheDeletingSessionsSearchPath() throws Exception {
		String schema = this.jdbc.queryForObject("SELECT current_schema()", String.class);
		enqueue("other-path", 1);
		enqueue("other-path", 2);
		try (Connection connection = this.holderPool.getConnection(); Statement statement = connection.createStatement()) {
			statement.execute("SET search_path = pg_catalog");
			try {
				assertThat(statement.executeUpdate("DELETE FROM " + schema + "." + FAIR_QUEUE + " WHERE ticket = 1"))
					.isOne();
			}
			finally {
				statement.execute("RESET search_path");
			}
		}
	}

	@Test
	void aCedeAtTheEndOfALocalTurnWakesTheOtherNode() throws Exception {
		this.holder.close();
		// a turn over by the time the first holder releases: the key is wanted, so it is ceded
		this.holder = new LockEngine(new JdbcLockRepository(this.holderPool, dialect()),
				LockEngineSettings.of(NEVER_AGAIN).withLocalTurn(Duration.ofMillis(1)));
		LockHandle first = this.holder.acquire(request("ceded", Duration.ZERO));
		CompletableFuture<LockHandle> localWaiter = CompletableFuture
			.supplyAsync(() -> this.holder.acquire(request("ceded", UNTIL_WOKEN)), this.threads);
		await().atMost(Duration.ofSeconds(20)).until(() -> !this.holder.waiting().isEmpty());
		Future<LockHandle> waiting = waitFor("ceded", UNTIL_WOKEN);
		listeningSession();
		first.close();
		try (LockHandle taken = waiting.get(30, TimeUnit.SECONDS)) {
			assertThat(taken.isHeld()).isTrue();
			// the ceding node's next thread holds back
			assertThat(localWaiter).isNotDone();
		}
		// the engine's shutdown ends its hold-back too
		this.holder.close();
		assertThatExceptionOfType(ExecutionException.class).isThrownBy(() -> localWaiter.get(30, TimeUnit.SECONDS))
			.withCauseInstanceOf(DbLockException.class);
	}

	@Test
	void aClosedEngineGivesItsListeningConnectionBack() throws Exception {
		try (LockHandle held = this.holder.acquire(request("closed", Duration.ZERO))) {
			Future<LockHandle> waiting = waitFor("closed", UNTIL_WOKEN);
			listeningSession();
			this.waiter.close();
			assertThatExceptionOfType(ExecutionException.class).isThrownBy(() -> waiting.get(30, TimeUnit.SECONDS))
				.withCauseInstanceOf(DbLockException.class);
			// given back, not listening, by the time the engine is closed or soon after on a slow machine
			await().atMost(Duration.ofSeconds(20))
				.until(() -> listeningSessions().isEmpty() && this.waiterPool.getHikariPoolMXBean().getActiveConnections() == 0);
		}
	}

	@Test
	void withoutWakeUpsNoSessionListensAndTheWaiterAsksAgainAtTheEndOfItsWait() throws Exception {
		this.waiter.close();
		this.waiterRepository = new JdbcLockRepository(this.waiterPool, dialect());
		this.waiterRepository.setWakeUps(false);
		this.waiter = new LockEngine(this.waiterRepository, LockEngineSettings.of(NEVER_AGAIN));
		assertThat(this.waiterRepository.releaseFeed()).isEmpty();
		LockHandle held = this.holder.acquire(request("not-woken", Duration.ZERO));
		long start = System.nanoTime();
		Future<LockHandle> waiting = waitFor("not-woken", Duration.ofSeconds(2));
		assertThat(listeningSessions()).isEmpty();
		held.close();
		// the last attempt, at the end of the wait, not before
		try (LockHandle taken = waiting.get(30, TimeUnit.SECONDS)) {
			assertThat(taken.isHeld()).isTrue();
			assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofSeconds(2));
		}
		assertThat(listeningSessions()).isEmpty();
	}

	@Test
	void aListenerWhoseSessionIsKilledListensAgain() throws Exception {
		LockHandle first = this.holder.acquire(request("killed", Duration.ZERO));
		Future<LockHandle> waiting = waitFor("killed", UNTIL_WOKEN);
		int killed = listeningSession();
		this.jdbc.queryForObject("SELECT pg_terminate_backend(?)", Boolean.class, killed);
		await().atMost(Duration.ofSeconds(20)).until(() -> {
			List<Integer> sessions = listeningSessions();
			return !sessions.isEmpty() && !sessions.contains(killed);
		});
		first.close();
		try (LockHandle taken = waiting.get(30, TimeUnit.SECONDS)) {
			assertThat(taken.isHeld()).isTrue();
		}
	}

	@Test
	void theTriggerNotifiesCommittedDeletesOfWantedRowsAlone() throws Exception {
		try (HikariDataSource listenerPool = pool("db-lock-wake-raw"); Connection listening = listenerPool.getConnection()) {
			try (Statement statement = listening.createStatement()) {
				statement.execute("LISTEN " + CHANNEL);
			}
			insert("never-wanted", false);
			insert("rolled-back", true);
			insert("wanted", true);
			this.jdbc.update("DELETE FROM " + TestDatabase.TABLE + " WHERE lock_key = 'never-wanted'");
			try (Connection transaction = this.holderPool.getConnection()) {
				transaction.setAutoCommit(false);
				try (Statement statement = transaction.createStatement()) {
					statement.executeUpdate("DELETE FROM " + TestDatabase.TABLE + " WHERE lock_key = 'rolled-back'");
				}
				transaction.rollback();
				transaction.setAutoCommit(true);
			}
			this.jdbc.update("DELETE FROM " + TestDatabase.TABLE + " WHERE lock_key = 'wanted'");
			// notifications arrive in commit order: one for 'wanted' and none before it
			assertThat(told(listening)).containsExactly(TestDatabase.TABLE + ":wanted");
			try (Statement statement = listening.createStatement()) {
				statement.execute("UNLISTEN " + CHANNEL);
			}
		}
	}

	/** The notifications the listening connection has, once it has one. */
	private static List<String> told(Connection listening) throws Exception {
		List<String> told = new ArrayList<>();
		PGConnection pg = listening.unwrap(PGConnection.class);
		await().atMost(Duration.ofSeconds(20)).until(() -> {
			PGNotification[] notifications = pg.getNotifications(100);
			if (notifications != null) {
				for (PGNotification notification : notifications) {
					told.add(notification.getName() + ":" + notification.getParameter());
				}
			}
			return !told.isEmpty();
		});
		return told;
	}

	private void enqueue(String key, long ticket) {
		enqueue(key, ticket, "test#" + ticket);
	}

	private void enqueue(String key, long ticket, String owner) {
		this.jdbc.update("INSERT INTO " + FAIR_QUEUE + " (ticket, lock_key, owner, expires_at)"
				+ " VALUES (?, ?, ?, clock_timestamp() + interval '1 minute')", ticket, key, owner);
	}

	private int tickets(String key) {
		return this.jdbc.queryForObject("SELECT count(*) FROM " + FAIR_QUEUE + " WHERE lock_key = ?", Integer.class, key);
	}

	private void insert(String key, boolean wanted) {
		this.jdbc.update("INSERT INTO " + TestDatabase.TABLE + " (lock_key, owner, token, acquired_at, expires_at, wanted_at)"
				+ " VALUES (?, 'test', 1, clock_timestamp(), clock_timestamp() + interval '1 minute', "
				+ (wanted ? "clock_timestamp()" : "NULL") + ")", key);
	}

	/** A thread of the waiting node that waits for a key; returns once its first attempt was refused. */
	private Future<LockHandle> waitFor(String key, Duration wait) {
		CompletableFuture<LockHandle> waiting = CompletableFuture.supplyAsync(() -> this.waiter.acquire(request(key, wait)),
				this.threads);
		awaitWanted(key);
		return waiting;
	}

	/** The one session of the waiting node that listens, once it listens. */
	private int listeningSession() {
		await().atMost(Duration.ofSeconds(20)).until(() -> listeningSessions().size() == 1);
		return listeningSessions().get(0);
	}

	private List<Integer> listeningSessions() {
		return this.jdbc.queryForList("SELECT pid FROM pg_stat_activity WHERE application_name = 'db-lock-wake-waiter'"
				+ " AND query = ? AND state = 'idle'", Integer.class, "LISTEN " + CHANNEL);
	}

	private void awaitWanted(String key) {
		await().atMost(Duration.ofSeconds(20))
			.until(() -> this.jdbc.queryForObject("SELECT count(*) FROM " + TestDatabase.TABLE
					+ " WHERE lock_key = ? AND wanted_at IS NOT NULL", Integer.class, key) == 1);
	}

	private static LockRequest request(String key, Duration wait) {
		return new LockRequest(key, wait, LEASE, true, Duration.ZERO);
	}

	private static LockRequest fair(String key, Duration wait) {
		return new LockRequest(key, wait, LEASE, true, Duration.ZERO, DbLockMode.FAIR);
	}

	private io.github.dblock.jdbc.dialect.SqlDialect dialect() {
		return TestDatabase.POSTGRESQL.dialect(this.holderPool);
	}

	private static HikariDataSource pool(String applicationName) {
		TestDatabase.Connection connection = TestDatabase.POSTGRESQL.connection();
		HikariConfig config = new HikariConfig();
		config.setJdbcUrl(connection.url());
		config.setUsername(connection.user());
		config.setPassword(connection.password());
		config.setMaximumPoolSize(4);
		config.setPoolName(applicationName);
		config.addDataSourceProperty("ApplicationName", applicationName);
		return new HikariDataSource(config);
	}

}
