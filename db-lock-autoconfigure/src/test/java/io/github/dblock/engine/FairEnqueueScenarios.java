package io.github.dblock.engine;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import javax.sql.DataSource;

import io.github.dblock.DbLockException;
import io.github.dblock.DbLockMode;
import io.github.dblock.LockHandle;
import io.github.dblock.LockRequest;
import io.github.dblock.jdbc.JdbcLockRepository;
import io.github.dblock.jdbc.dialect.FairQueueStatements;
import io.github.dblock.testsupport.TestDatabase;

import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * The fair enqueue and its first look, sent in one round trip ({@code SqlSyntax#sentTogether},
 * {@code SqlSyntax#sentInSequence}), against another session standing for another node, on any
 * database that sends them so.
 */
final class FairEnqueueScenarios {

	private static final String QUEUE = TestDatabase.TABLE + "_fair_queue";

	private final TestDatabase database;

	private final DataSource plain;

	private final JdbcTemplate jdbc;

	private final FairQueueStatements statements;

	/**
	 * @param database the database
	 * @param plain connections for the other node and the checks, the tables migrated
	 */
	FairEnqueueScenarios(TestDatabase database, DataSource plain) {
		this.database = database;
		this.plain = plain;
		this.jdbc = new JdbcTemplate(plain);
		this.statements = database.dialect(plain).fairQueueStatements();
	}

	/**
	 * The engine's enqueue waits for the key's row, which another node holds while it
	 * enqueues a ticket of its own (by the same statement); the look at the head, in the same
	 * round trip, sees that ticket, committed while the enqueue waited: it is not the head.
	 * Once that ticket is gone the key is taken, with a larger ticket.
	 * @param key a key of this test's own
	 * @param pool the engine's connections
	 * @param threads runs the engine's attempt
	 * @param enqueueWaits whether the engine's enqueue waits for a lock
	 */
	void firstLookSeesATicketCommittedWhileTheEnqueueWaited(String key, DataSource pool, ExecutorService threads,
			BooleanSupplier enqueueWaits) throws Exception {
		newKey(key);
		try (LockEngine engine = engine(pool); Connection other = this.plain.getConnection()) {
			other.setAutoCommit(false);
			long otherTicket;
			try (PreparedStatement enqueue = other.prepareStatement(this.statements.enqueueSql())) {
				enqueue.setString(1, "other-node#1");
				enqueue.setLong(2, TimeUnit.MINUTES.toMicros(10));
				enqueue.setString(3, key);
				try (ResultSet rs = enqueue.executeQuery()) {
					rs.next();
					otherTicket = rs.getLong(1);
				}
			}
			Future<Optional<LockHandle>> attempt = threads.submit(() -> engine.tryAcquire(request(key)));
			// polled more than 100 ms apart: InnoDB refreshes innodb_trx only when it was not read for 100 ms
			await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200)).until(enqueueWaits::getAsBoolean);
			other.commit();
			Optional<LockHandle> taken = attempt.get(30, TimeUnit.SECONDS);
			taken.ifPresent(LockHandle::close);
			assertThat(taken).as("the other node's earlier ticket is the head").isEmpty();
			this.jdbc.update("DELETE FROM " + QUEUE + " WHERE ticket = ?", otherTicket);
			try (LockHandle held = engine.acquire(request(key).withWait(Duration.ofSeconds(30)))) {
				assertThat(held.fencingToken()).isGreaterThan(otherTicket);
			}
		}
	}

	/**
	 * An enqueue that fails (its wait for the key's row, which another session holds, runs
	 * past the session's lock timeout) leaves no ticket, and the pool's one connection serves
	 * the next acquisition: its transaction, if the string began one, was rolled back.
	 * @param key a key of this test's own
	 * @param impatient the engine's pool: one connection that waits briefly for a row lock
	 */
	void failedEnqueueLeavesNoTicketAndItsConnectionUsable(String key, DataSource impatient) throws Exception {
		newKey(key);
		try (LockEngine engine = engine(impatient)) {
			try (Connection other = this.plain.getConnection()) {
				other.setAutoCommit(false);
				try (PreparedStatement lock = other.prepareStatement(
						"SELECT lock_key FROM " + TestDatabase.TABLE + "_fair_keys WHERE lock_key = ? FOR UPDATE")) {
					lock.setString(1, key);
					lock.executeQuery().close();
				}
				assertThatExceptionOfType(DbLockException.class).isThrownBy(() -> engine.tryAcquire(request(key)))
					.withMessageContaining("Could not enqueue");
				other.rollback();
			}
			assertThat(this.jdbc.queryForObject("SELECT COUNT(*) FROM " + QUEUE + " WHERE lock_key = ?", Integer.class,
					key)).isZero();
			try (LockHandle held = engine.tryAcquire(request(key)).orElseThrow()) {
				assertThat(held.isHeld()).isTrue();
			}
		}
	}

	/** A key with its row in the keys' table and no ticket. */
	private void newKey(String key) {
		this.jdbc.update("DELETE FROM " + QUEUE + " WHERE lock_key = ?", key);
		try {
			this.jdbc.update(this.statements.insertKeySql(), key);
		}
		catch (org.springframework.dao.DuplicateKeyException ex) {
			// there already
		}
	}

	private LockEngine engine(DataSource pool) {
		return new LockEngine(new JdbcLockRepository(pool, this.database.dialect(pool)),
				LockEngineSettings.of(new Backoff(Duration.ofMillis(2), Duration.ofMillis(50))));
	}

	private static LockRequest request(String key) {
		return new LockRequest(key, Duration.ZERO, Duration.ofSeconds(30), false, Duration.ZERO, DbLockMode.FAIR);
	}

}
