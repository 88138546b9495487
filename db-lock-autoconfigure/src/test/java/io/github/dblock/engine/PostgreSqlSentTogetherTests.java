package io.github.dblock.engine;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.github.dblock.DbLockMode;
import io.github.dblock.LockHandle;
import io.github.dblock.LockRequest;
import io.github.dblock.jdbc.FairLockRepository;
import io.github.dblock.jdbc.FairLockRepository.Enqueued;
import io.github.dblock.jdbc.JdbcLockRepository;
import io.github.dblock.testsupport.TestDatabase;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Statements sent together in one round trip on PostgreSQL ({@code SqlSyntax#sentTogether}):
 * the fair mode's enqueue and first look at the head, the writer's and the reader's
 * token-order lock and insert. A statement after a wait for a lock sees what another session committed while it
 * waited, whatever the session's default isolation. Another session stands for another
 * node: it takes the lock, writes its row and commits only once the engine waits for it.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PostgreSqlSentTogetherTests {

	private static final String QUEUE = TestDatabase.TABLE + "_fair_queue";

	private static final String KEYS = TestDatabase.TABLE + "_fair_keys";

	private static final String HOLDERS = TestDatabase.TABLE + "_rw";

	private static final String APPLICATION = "db-lock-sent-together";

	private final ExecutorService threads = Executors.newCachedThreadPool();

	private JdbcTemplate jdbc;

	private HikariDataSource plain;

	@BeforeAll
	void migrate() {
		// migrates the tables
		this.plain = TestDatabase.POSTGRESQL.dataSource(4);
		this.jdbc = new JdbcTemplate(this.plain);
	}

	@AfterAll
	void close() {
		this.threads.shutdownNow();
		this.plain.close();
	}

	@ParameterizedTest
	@ValueSource(strings = { "TRANSACTION_READ_COMMITTED", "TRANSACTION_REPEATABLE_READ" })
	void theFirstLookSeesATicketCommittedWhileTheEnqueueWaitedForTheKeysRow(String isolation) throws Exception {
		try (HikariDataSource pool = pool(isolation)) {
			new FairEnqueueScenarios(TestDatabase.POSTGRESQL, this.plain).firstLookSeesATicketCommittedWhileTheEnqueueWaited(
					"fair-enqueue-" + isolation, pool, this.threads, this::enqueueWaitsForALock);
		}
	}

	/**
	 * A writer whose insert waited for the key's token-order lock sees the reader's row that
	 * the lock's holder committed meanwhile (whose token is smaller): it does not hold.
	 */
	@ParameterizedTest
	@ValueSource(strings = { "TRANSACTION_READ_COMMITTED", "TRANSACTION_REPEATABLE_READ" })
	void aWriterSeesAReaderCommittedWhileItWaitedForTheTokenOrder(String isolation) throws Exception {
		String key = "rw-together-" + isolation;
		try (HikariDataSource pool = pool(isolation);
				LockEngine engine = new LockEngine(new JdbcLockRepository(pool, TestDatabase.POSTGRESQL.dialect(pool)),
						LockEngineSettings.of(new Backoff(Duration.ofMillis(2), Duration.ofMillis(50))))) {
			assertThat(attemptWhileAnotherHolderCommits(engine, key, "R", DbLockMode.WRITE))
				.as("the other node's reader holds")
				.isEmpty();
		}
		finally {
			this.jdbc.update("DELETE FROM " + HOLDERS + " WHERE lock_key = ?", key);
		}
	}

	/**
	 * A reader whose insert waited for the key's token-order lock sees the writer's row that
	 * the lock's holder committed meanwhile, though no intent of that writer is live (as
	 * while its intent's renewal is late): it does not hold; once the row is gone it holds,
	 * with a larger token.
	 */
	@ParameterizedTest
	@ValueSource(strings = { "TRANSACTION_READ_COMMITTED", "TRANSACTION_REPEATABLE_READ" })
	void aReaderSeesAWriterCommittedWhileItWaitedForTheTokenOrder(String isolation) throws Exception {
		String key = "rw-reader-together-" + isolation;
		try (HikariDataSource pool = pool(isolation);
				LockEngine engine = new LockEngine(new JdbcLockRepository(pool, TestDatabase.POSTGRESQL.dialect(pool)),
						LockEngineSettings.of(new Backoff(Duration.ofMillis(2), Duration.ofMillis(50))))) {
			assertThat(attemptWhileAnotherHolderCommits(engine, key, "W", DbLockMode.READ))
				.as("the other node's writer holds")
				.isEmpty();
			long writerToken = this.jdbc.queryForObject("SELECT token FROM " + HOLDERS + " WHERE lock_key = ?", Long.class,
					key);
			this.jdbc.update("DELETE FROM " + HOLDERS + " WHERE lock_key = ?", key);
			try (LockHandle held = engine.tryAcquire(
					new LockRequest(key, Duration.ZERO, Duration.ofSeconds(30), false, Duration.ZERO, DbLockMode.READ))
				.orElseThrow()) {
				assertThat(held.fencingToken()).isGreaterThan(writerToken);
			}
		}
		finally {
			this.jdbc.update("DELETE FROM " + HOLDERS + " WHERE lock_key = ?", key);
		}
	}

	/**
	 * A reader that waited for the key's token-order lock longer than its lease, its string
	 * sent as simple queries too ({@code preferQueryMode=simple}), has its lease counted from
	 * its insert, after the wait: never a lease that ended before it was handed out.
	 */
	@ParameterizedTest
	@ValueSource(strings = { "extended", "simple" })
	void aReaderThatWaitedLongerThanItsLeaseHasItsLeaseFromItsInsert(String queryMode) throws Exception {
		String key = "rw-reader-late-" + queryMode;
		this.jdbc.update("DELETE FROM " + HOLDERS + " WHERE lock_key = ?", key);
		this.jdbc.update("DELETE FROM " + HOLDERS + "_intents WHERE lock_key = ?", key);
		HikariConfig config = config("TRANSACTION_READ_COMMITTED");
		config.addDataSourceProperty("preferQueryMode", queryMode);
		try (HikariDataSource pool = new HikariDataSource(config);
				LockEngine engine = new LockEngine(new JdbcLockRepository(pool, TestDatabase.POSTGRESQL.dialect(pool)),
						LockEngineSettings.of(new Backoff(Duration.ofMillis(2), Duration.ofMillis(50))));
				Connection other = this.plain.getConnection()) {
			other.setAutoCommit(false);
			takeTokenOrderLock(other, key, "pg_advisory_xact_lock");
			Future<Optional<LockHandle>> attempt = this.threads.submit(() -> engine
				.tryAcquire(new LockRequest(key, Duration.ZERO, Duration.ofSeconds(1), false, Duration.ZERO, DbLockMode.READ)));
			// the reader waits for the lock 1.2 s by the database's clock: longer than its lease
			await().atMost(Duration.ofSeconds(30)).until(() -> this.jdbc.queryForObject("SELECT COUNT(*) FROM "
					+ "pg_stat_activity WHERE application_name = ? AND wait_event_type = 'Lock' "
					+ "AND query_start < clock_timestamp() - interval '1.2 seconds'", Integer.class, APPLICATION) > 0);
			Instant freed = this.jdbc.queryForObject("SELECT clock_timestamp()", OffsetDateTime.class).toInstant();
			other.commit();
			try (LockHandle held = attempt.get(30, TimeUnit.SECONDS).orElseThrow()) {
				assertThat(held.expiresAt()).as("the lease's end").isAfter(freed);
			}
		}
	}

	private void takeTokenOrderLock(Connection connection, String key, String function) throws Exception {
		Object[] order = TestDatabase.POSTGRESQL.dialect(this.plain).readWriteStatements().lockKeyParameters(key);
		try (PreparedStatement lock = connection.prepareStatement("SELECT " + function + "(?, ?)")) {
			lock.setObject(1, order[0]);
			lock.setObject(2, order[1]);
			lock.executeQuery().close();
		}
	}

	/**
	 * Another session, standing for another node, takes the key's token-order lock and
	 * inserts a holder row of this kind (no intent); the engine's attempt in this mode waits
	 * for the lock; the session commits.
	 * @return what the attempt took (released at once)
	 */
	private Optional<LockHandle> attemptWhileAnotherHolderCommits(LockEngine engine, String key, String kind,
			DbLockMode mode) throws Exception {
		this.jdbc.update("DELETE FROM " + HOLDERS + " WHERE lock_key = ?", key);
		this.jdbc.update("DELETE FROM " + HOLDERS + "_intents WHERE lock_key = ?", key);
		try (Connection other = this.plain.getConnection()) {
			other.setAutoCommit(false);
			takeTokenOrderLock(other, key, "pg_advisory_xact_lock");
			try (PreparedStatement holder = other.prepareStatement("INSERT INTO " + HOLDERS
							+ " (lock_key, owner, token, kind, acquired_at, expires_at) VALUES (?, 'other-node#1', nextval('"
							+ TestDatabase.TABLE + "_token_seq'), ?, clock_timestamp(), clock_timestamp() + interval '10 minutes')")) {
				holder.setString(1, key);
				holder.setString(2, kind);
				holder.executeUpdate();
			}
			Future<Optional<LockHandle>> attempt = this.threads.submit(() -> engine
				.tryAcquire(new LockRequest(key, Duration.ZERO, Duration.ofSeconds(30), false, Duration.ZERO, mode)));
			// the attempt's insert waits for the token order's lock, which the other session holds
			await().atMost(Duration.ofSeconds(30)).until(this::enqueueWaitsForALock);
			other.commit();
			Optional<LockHandle> taken = attempt.get(30, TimeUnit.SECONDS);
			taken.ifPresent(LockHandle::close);
			return taken;
		}
	}

	/** With a {@code lock_timeout} of 50 ms. */
	@Test
	void aFailedEnqueueLeavesNoTicketAndItsConnectionUsable() throws Exception {
		HikariConfig config = config("TRANSACTION_READ_COMMITTED");
		config.setMaximumPoolSize(1);
		config.setConnectionInitSql("SET lock_timeout = '50ms'");
		try (HikariDataSource pool = new HikariDataSource(config)) {
			new FairEnqueueScenarios(TestDatabase.POSTGRESQL, this.plain)
				.failedEnqueueLeavesNoTicketAndItsConnectionUsable("fair-enqueue-failed", pool);
		}
	}

	/** On a key with its row, the enqueue looks at the head in its own round trip: the look is taken. */
	@Test
	void theEnqueueOfAKnownKeyLooksAtTheHead() {
		String key = "fair-enqueue-looks";
		this.jdbc.update("DELETE FROM " + QUEUE + " WHERE lock_key = ?", key);
		this.jdbc.update("INSERT INTO " + KEYS + " (lock_key) VALUES (?) ON CONFLICT DO NOTHING", key);
		FairLockRepository queue = new JdbcLockRepository(this.plain, TestDatabase.POSTGRESQL.dialect(this.plain))
			.fairQueue()
			.orElseThrow();
		Enqueued first = queue.enqueueAndLook(key, "looks#1", Duration.ofSeconds(30));
		Enqueued second = queue.enqueueAndLook(key, "looks#2", Duration.ofSeconds(30));
		try {
			assertThat(first.head()).isEqualTo(first.ticket().number());
			assertThat(second.head()).isEqualTo(first.ticket().number());
		}
		finally {
			queue.leave(first.ticket());
			queue.leave(second.ticket());
		}
	}

	private boolean enqueueWaitsForALock() {
		return this.jdbc.queryForObject("SELECT COUNT(*) FROM pg_stat_activity WHERE application_name = ? "
				+ "AND wait_event_type = 'Lock'", Integer.class, APPLICATION) > 0;
	}

	private static HikariDataSource pool(String isolation) {
		return new HikariDataSource(config(isolation));
	}

	private static HikariConfig config(String isolation) {
		TestDatabase.Connection connection = TestDatabase.POSTGRESQL.connection();
		HikariConfig config = new HikariConfig();
		config.setJdbcUrl(connection.url());
		config.setUsername(connection.user());
		config.setPassword(connection.password());
		config.setMaximumPoolSize(4);
		config.setPoolName(APPLICATION);
		config.setTransactionIsolation(isolation);
		config.addDataSourceProperty("ApplicationName", APPLICATION);
		return config;
	}

}
