package io.github.dblock.engine;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import com.zaxxer.hikari.HikariDataSource;
import io.github.dblock.DbLockException;
import io.github.dblock.DbLockMode;
import io.github.dblock.LockHandle;
import io.github.dblock.LockRequest;
import io.github.dblock.jdbc.JdbcLockRepository;
import io.github.dblock.jdbc.dialect.OneTransaction;
import io.github.dblock.jdbc.dialect.SqlDialect;
import io.github.dblock.testsupport.TestDatabase;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * Statements sent in one round trip on MariaDB, as an anonymous compound statement
 * ({@code SqlSyntax#sentInSequence}, {@code SqlSyntax#sentTogether}): each statement of a
 * sequence commits before the next starts, and a later statement sees what another session
 * committed while an earlier one waited; statements sent together commit or roll back as
 * one. Another session stands for another node.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class MariaDbSentInSequenceTests {

	private static final String QUEUE = TestDatabase.TABLE + "_fair_queue";

	private static final String KEYS = TestDatabase.TABLE + "_fair_keys";

	private final ExecutorService threads = Executors.newCachedThreadPool();

	private HikariDataSource plain;

	private JdbcTemplate jdbc;

	private SqlDialect dialect;

	@BeforeAll
	void migrate() {
		this.plain = TestDatabase.MARIADB.dataSource(4);
		this.jdbc = new JdbcTemplate(this.plain);
		this.dialect = TestDatabase.MARIADB.dialect(this.plain);
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
	 * Together, a statement that fails leaves nothing of the ones before it, and the
	 * connection is not left in the transaction (a pool of one serves the next statement).
	 */
	@Test
	void togetherTheStatementsCommitAsOne() {
		this.jdbc.update("DELETE FROM sequence_rows");
		String sql = this.dialect.sentTogether("INSERT INTO sequence_rows (id) VALUES (?)",
				"INSERT INTO sequence_rows (id) VALUES (?)");
		try (HikariDataSource one = TestDatabase.MARIADB.dataSource(1)) {
			JdbcTemplate single = new JdbcTemplate(one);
			assertThatExceptionOfType(DataAccessException.class)
				.isThrownBy(() -> OneTransaction.sendTogether(single, sql, new Object[] { 2, 2 }));
			assertThat(single.queryForObject("SELECT @@in_transaction", Integer.class)).isZero();
		}
		assertThat(this.jdbc.queryForList("SELECT id FROM sequence_rows", Integer.class)).isEmpty();
	}

	/**
	 * The fair enqueue waits for the key's row, which another node holds while it enqueues a
	 * ticket of its own; the look at the head, in the same round trip, sees that ticket,
	 * committed while the enqueue waited: it is not the head. Once that ticket is gone the key
	 * is taken, with a larger ticket.
	 */
	@Test
	void theFirstLookSeesATicketCommittedWhileTheEnqueueWaitedForTheKeysRow() throws Exception {
		String key = "fair-sequence-look";
		this.jdbc.update("DELETE FROM " + QUEUE + " WHERE lock_key = ?", key);
		this.jdbc.update("INSERT IGNORE INTO " + KEYS + " (lock_key) VALUES (?)", key);
		try (HikariDataSource pool = TestDatabase.MARIADB.dataSource(4);
				LockEngine engine = new LockEngine(new JdbcLockRepository(pool, TestDatabase.MARIADB.dialect(pool)),
						LockEngineSettings.of(new Backoff(Duration.ofMillis(2), Duration.ofMillis(50))));
				Connection other = this.plain.getConnection()) {
			other.setAutoCommit(false);
			long otherTicket;
			try (PreparedStatement lock = other
				.prepareStatement("SELECT lock_key FROM " + KEYS + " WHERE lock_key = ? FOR UPDATE");
					PreparedStatement insert = other.prepareStatement("INSERT INTO " + QUEUE
							+ " (lock_key, owner, expires_at) VALUES (?, 'other-node#1', NOW(6) + INTERVAL 10 MINUTE)",
							Statement.RETURN_GENERATED_KEYS)) {
				lock.setString(1, key);
				lock.executeQuery().close();
				insert.setString(1, key);
				insert.executeUpdate();
				try (ResultSet rs = insert.getGeneratedKeys()) {
					rs.next();
					otherTicket = rs.getLong(1);
				}
			}
			Future<Optional<LockHandle>> attempt = this.threads.submit(() -> engine
				.tryAcquire(new LockRequest(key, Duration.ZERO, Duration.ofSeconds(30), false, Duration.ZERO, DbLockMode.FAIR)));
			// polled more than 100 ms apart: InnoDB refreshes innodb_trx only when it was not read for 100 ms
			await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200)).until(this::enqueueWaits);
			other.commit();
			Optional<LockHandle> taken = attempt.get(30, TimeUnit.SECONDS);
			taken.ifPresent(LockHandle::close);
			assertThat(taken).as("the other node's earlier ticket is the head").isEmpty();
			this.jdbc.update("DELETE FROM " + QUEUE + " WHERE ticket = ?", otherTicket);
			try (LockHandle held = engine.acquire(
					new LockRequest(key, Duration.ofSeconds(30), Duration.ofSeconds(30), false, Duration.ZERO, DbLockMode.FAIR))) {
				assertThat(held.fencingToken()).isGreaterThan(otherTicket);
			}
		}
	}

	/**
	 * An enqueue that fails inside its transaction (its wait for the key's row runs past the
	 * session's lock-wait timeout) leaves no ticket, and the pool's one connection serves
	 * the next acquisition: the transaction the string began was rolled back.
	 */
	@Test
	void aFailedEnqueueLeavesNoTicketAndItsConnectionUsable() throws Exception {
		String key = "fair-sequence-failed";
		this.jdbc.update("DELETE FROM " + QUEUE + " WHERE lock_key = ?", key);
		this.jdbc.update("INSERT IGNORE INTO " + KEYS + " (lock_key) VALUES (?)", key);
		LockRequest request = new LockRequest(key, Duration.ZERO, Duration.ofSeconds(30), false, Duration.ZERO,
				DbLockMode.FAIR);
		try (HikariDataSource pool = TestDatabase.MARIADB.impatientDataSource(1);
				LockEngine engine = new LockEngine(new JdbcLockRepository(pool, TestDatabase.MARIADB.dialect(pool)),
						LockEngineSettings.of(new Backoff(Duration.ofMillis(2), Duration.ofMillis(50))))) {
			try (Connection other = this.plain.getConnection()) {
				other.setAutoCommit(false);
				try (PreparedStatement lock = other
					.prepareStatement("SELECT lock_key FROM " + KEYS + " WHERE lock_key = ? FOR UPDATE")) {
					lock.setString(1, key);
					lock.executeQuery().close();
				}
				assertThatExceptionOfType(DbLockException.class).isThrownBy(() -> engine.tryAcquire(request))
					.withMessageContaining("Could not enqueue");
				other.rollback();
			}
			assertThat(this.jdbc.queryForObject("SELECT COUNT(*) FROM " + QUEUE + " WHERE lock_key = ?", Integer.class,
					key)).isZero();
			try (LockHandle held = engine.tryAcquire(request).orElseThrow()) {
				assertThat(held.isHeld()).isTrue();
			}
		}
	}

	private boolean enqueueWaits() {
		Long count = this.jdbc.queryForObject("SELECT COUNT(*) FROM information_schema.innodb_trx "
				+ "WHERE trx_state = 'LOCK WAIT' AND trx_query LIKE ?", Long.class, "%INSERT INTO " + QUEUE + " %");
		return count != null && count > 0;
	}

}
