package io.github.dblock.engine;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.List;
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
import io.github.dblock.jdbc.JdbcLockRepository;
import io.github.dblock.jdbc.Lease;
import io.github.dblock.jdbc.ReadWriteLockRepository;
import io.github.dblock.jdbc.ReadWriteLockRepository.WriteAttempt;
import io.github.dblock.jdbc.dialect.OneTransaction;
import io.github.dblock.jdbc.dialect.SqlDialect;
import io.github.dblock.testsupport.TestDatabase;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * Statements sent in one round trip on MariaDB, as an anonymous compound statement
 * ({@code SqlSyntax#sentInSequence}): each statement commits before the next starts, and a
 * later statement sees what another session committed while an earlier one waited. Another
 * session stands for another node.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class MariaDbSentInSequenceTests {

	private static final String QUEUE = TestDatabase.TABLE + "_fair_queue";

	private static final String HOLDERS = TestDatabase.TABLE + "_rw";

	private static final String INTENTS = TestDatabase.TABLE + "_rw_intents";

	private final ExecutorService threads = Executors.newCachedThreadPool();

	private HikariDataSource plain;

	private JdbcTemplate jdbc;

	private SqlDialect dialect;

	private FairEnqueueScenarios fair;

	@BeforeAll
	void migrate() {
		this.plain = TestDatabase.MARIADB.dataSource(4);
		this.jdbc = new JdbcTemplate(this.plain);
		this.dialect = TestDatabase.MARIADB.dialect(this.plain);
		this.fair = new FairEnqueueScenarios(TestDatabase.MARIADB, this.plain);
		this.jdbc.execute("CREATE TABLE IF NOT EXISTS sequence_rows (id INT PRIMARY KEY)");
	}

	@AfterAll
	void close() {
		this.threads.shutdownNow();
		this.jdbc.execute("DROP TABLE IF EXISTS sequence_rows");
		this.plain.close();
	}

	/** In sequence, a statement that fails leaves the ones before it committed. */
	@Test
	void inSequenceEachStatementCommitsBeforeTheNext() {
		this.jdbc.update("DELETE FROM sequence_rows");
		String sql = this.dialect.sentInSequence("INSERT INTO sequence_rows (id) VALUES (?)",
				"INSERT INTO sequence_rows (id) VALUES (?)");
		assertThatExceptionOfType(DataAccessException.class)
			.isThrownBy(() -> OneTransaction.sendTogether(this.jdbc, sql, new Object[] { 1, 1 }));
		assertThat(this.jdbc.queryForList("SELECT id FROM sequence_rows", Integer.class)).containsExactly(1);
	}

	/**
	 * A writer takes another owner's intent that has ended, whether the claim's assignments
	 * read the columns as the one before left them or as they were
	 * ({@code SIMULTANEOUS_ASSIGNMENT}), and holds the key.
	 */
	@ParameterizedTest
	@ValueSource(strings = { "", ",SIMULTANEOUS_ASSIGNMENT" })
	void aWriterTakesAnEndedIntentOfAnother(String sqlMode) {
		String key = "claim-ended" + sqlMode.replace(',', '-');
		this.jdbc.update("DELETE FROM " + HOLDERS + " WHERE lock_key = ?", key);
		this.jdbc.update("DELETE FROM " + INTENTS + " WHERE lock_key = ?", key);
		this.jdbc.update("INSERT INTO " + INTENTS
				+ " (lock_key, owner, expires_at) VALUES (?, 'other-writer#1', UTC_TIMESTAMP(6) - INTERVAL 1 SECOND)", key);
		HikariConfig config = config();
		config.setConnectionInitSql("SET SESSION sql_mode = CONCAT(@@sql_mode, '" + sqlMode + "')");
		try (HikariDataSource pool = new HikariDataSource(config)) {
			ReadWriteLockRepository repository = new JdbcLockRepository(pool, TestDatabase.MARIADB.dialect(pool))
				.readWriteLocks()
				.orElseThrow();
			WriteAttempt attempt = repository.tryWrite(key, "writer#1", Duration.ofSeconds(30), false);
			assertThat(attempt.intent()).isTrue();
			assertThat(attempt.lease()).as("the writer's lease").isNotNull();
			assertThat(this.jdbc.queryForObject("SELECT COUNT(*) FROM " + INTENTS
					+ " WHERE lock_key = ? AND owner = 'writer#1' AND expires_at > UTC_TIMESTAMP(6)", Integer.class, key))
				.isOne();
			repository.release(attempt.lease(), true);
		}
	}

	/**
	 * A reader whose insert waited (for another session's lock of the key's intent) longer
	 * than its lease, counted from when the server received it, finds its row ended at its
	 * check: it does not hold, and its row is not left behind.
	 */
	@Test
	void aReaderWhoseLeaseEndedBeforeItsCheckLeavesNoRow() throws Exception {
		String key = "reader-ended-at-check";
		this.jdbc.update("DELETE FROM " + HOLDERS + " WHERE lock_key = ?", key);
		this.jdbc.update("DELETE FROM " + INTENTS + " WHERE lock_key = ?", key);
		this.jdbc.update("INSERT INTO " + INTENTS
				+ " (lock_key, owner, expires_at) VALUES (?, '', UTC_TIMESTAMP(6) - INTERVAL 1 SECOND)", key);
		try (HikariDataSource pool = new HikariDataSource(config()); Connection other = this.plain.getConnection()) {
			// a statement timeout far beyond the wait: the insert waits, it is not given up on
			ReadWriteLockRepository repository = new JdbcLockRepository(pool, TestDatabase.MARIADB.dialect(pool),
					Duration.ofSeconds(30))
				.readWriteLocks()
				.orElseThrow();
			other.setAutoCommit(false);
			try (PreparedStatement lock = other
				.prepareStatement("SELECT owner FROM " + INTENTS + " WHERE lock_key = ? FOR UPDATE")) {
				lock.setString(1, key);
				lock.executeQuery().close();
			}
			Future<Optional<Lease>> read = this.threads
				.submit(() -> repository.tryRead(key, "reader#1", Duration.ofMillis(200)));
			// polled more than 100 ms apart: InnoDB refreshes innodb_trx only when it was not read for 100 ms
			await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200)).until(() -> this.jdbc.queryForObject(
					"SELECT COUNT(*) FROM information_schema.innodb_trx WHERE trx_state = 'LOCK WAIT' "
							+ "AND trx_wait_started < NOW() - INTERVAL 0.5 SECOND AND trx_query LIKE ?",
					Integer.class, "%INSERT INTO " + HOLDERS + " %") > 0);
			other.commit();
			assertThat(read.get(30, TimeUnit.SECONDS)).isEmpty();
		}
		assertThat(this.jdbc.queryForObject("SELECT COUNT(*) FROM " + HOLDERS + " WHERE lock_key = ?", Integer.class,
				key)).as("the reader's rows").isZero();
	}

	/**
	 * With the driver's server-side prepared statements ({@code useServerPrepStmts}), the
	 * statements sent in one round trip work as well: a read, a write and a fair cycle.
	 */
	@Test
	void serverSidePreparedStatementsSendTheSequencesToo() {
		HikariConfig config = config();
		config.addDataSourceProperty("useServerPrepStmts", "true");
		try (HikariDataSource pool = new HikariDataSource(config);
				LockEngine engine = new LockEngine(new JdbcLockRepository(pool, TestDatabase.MARIADB.dialect(pool)),
						LockEngineSettings.of(new Backoff(Duration.ofMillis(2), Duration.ofMillis(50))))) {
			long token = 0;
			for (DbLockMode mode : List.of(DbLockMode.READ, DbLockMode.WRITE, DbLockMode.FAIR, DbLockMode.FAIR)) {
				try (LockHandle held = engine.tryAcquire(new LockRequest("prepared-" + (mode == DbLockMode.FAIR ? "fair" : "rw"),
						Duration.ZERO, Duration.ofSeconds(30), false, Duration.ZERO, mode)).orElseThrow()) {
					assertThat(held.isHeld()).isTrue();
					if (mode != DbLockMode.FAIR) {
						assertThat(held.fencingToken()).isGreaterThan(token);
						token = held.fencingToken();
					}
				}
			}
		}
	}

	private static HikariConfig config() {
		TestDatabase.Connection connection = TestDatabase.MARIADB.connection();
		HikariConfig config = new HikariConfig();
		config.setJdbcUrl(connection.url());
		config.setUsername(connection.user());
		config.setPassword(connection.password());
		config.setMaximumPoolSize(2);
		return config;
	}

	@Test
	void theFirstLookSeesATicketCommittedWhileTheEnqueueWaitedForTheKeysRow() throws Exception {
		try (HikariDataSource pool = TestDatabase.MARIADB.dataSource(4)) {
			this.fair.firstLookSeesATicketCommittedWhileTheEnqueueWaited("fair-sequence-look", pool, this.threads,
					this::enqueueWaits);
		}
	}

	/**
	 * With {@code innodb_lock_wait_timeout = 0}: the wait fails at once, well within the
	 * client's network timeout (a client that gave up first would leave the statement to
	 * commit on the server, for the engine's clean-up of unknown outcomes).
	 */
	@Test
	void aFailedEnqueueLeavesNoTicketAndItsConnectionUsable() throws Exception {
		HikariConfig config = config();
		config.setMaximumPoolSize(1);
		config.setConnectionInitSql("SET SESSION innodb_lock_wait_timeout = 0");
		try (HikariDataSource pool = new HikariDataSource(config)) {
			this.fair.failedEnqueueLeavesNoTicketAndItsConnectionUsable("fair-sequence-failed", pool);
		}
	}

	private boolean enqueueWaits() {
		Long count = this.jdbc.queryForObject("SELECT COUNT(*) FROM information_schema.innodb_trx "
				+ "WHERE trx_state = 'LOCK WAIT' AND trx_query LIKE ?", Long.class, "%INSERT INTO " + QUEUE + " %");
		return count != null && count > 0;
	}

}
