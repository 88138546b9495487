package io.github.dblock.jdbc;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import com.zaxxer.hikari.HikariDataSource;
import io.github.dblock.testsupport.TestDatabase;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * A renewal that the database evaluated before its row's lease ended and that commits after
 * it (a commit that stalls, here a test-only trigger that sleeps between the renewal's check
 * and its write, holding the row's lock): whoever goes past the row as ended in the meantime
 * must not hold the key together with the renewed holder. The fair mode's next ticket, a
 * writer after a reader, a reader after a writer. The renewal is known to be inside the
 * trigger (the server lists its session as sleeping) and the row known to have ended (a plain
 * read finds it ended) before the other caller's attempt starts: no timing is hoped for.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class LateRenewalContractTests {

	/** The owner whose renewals stall. */
	static final String LATE = "late";

	/** How long a stalled renewal sleeps: past {@link #SHORT_LEASE} from its start. */
	static final int STALL_SECONDS = 6;

	private static final Duration SHORT_LEASE = Duration.ofSeconds(3);

	private static final Duration LONG_LEASE = Duration.ofSeconds(60);

	private static final String TABLE = TestDatabase.TABLE;

	private HikariDataSource dataSource;

	private JdbcTemplate jdbc;

	private JdbcFairLockRepository fair;

	private JdbcReadWriteLockRepository readWrite;

	private CommitGuard guard;

	/** Over a repository whose statement timeout (1 s) is shorter than the stall. */
	private JdbcFairLockRepository impatientFair;

	private JdbcReadWriteLockRepository impatientReadWrite;

	protected abstract TestDatabase database();

	/**
	 * The statements that make {@code table}'s updates of {@link #LATE}'s rows sleep
	 * {@link #STALL_SECONDS}; none where the database cannot (its tests of a late renewal are
	 * skipped).
	 */
	protected abstract List<String> createStall(String table);

	/** The statements that drop what {@link #createStall} made; each may find nothing. */
	protected abstract List<String> dropStall(String table);

	/** Counts the server's sessions that sleep in the trigger. */
	protected abstract String sleepingSessionsSql();

	/**
	 * Whether a writer's insert itself waits for a holder row's lock (InnoDB's
	 * {@code INSERT ... SELECT} reads with shared locks), so that it, not the delete after it,
	 * runs into the statement timeout behind a stalled renewal.
	 */
	protected boolean writerInsertWaitsForRowLocks() {
		return false;
	}

	/** Counts the server's sessions that wait for a lock another holds. */
	protected abstract String lockWaitsSql();

	@BeforeAll
	void createRepositories() {
		this.dataSource = database().dataSource(8);
		this.jdbc = new JdbcTemplate(this.dataSource);
		// longer than the stall: a statement that waits for the stalled row's lock is not cut off
		JdbcLockRepository leases = new JdbcLockRepository(this.dataSource, database().dialect(this.dataSource),
				Duration.ofSeconds(STALL_SECONDS + 10));
		this.fair = new JdbcFairLockRepository(leases.connections());
		this.readWrite = new JdbcReadWriteLockRepository(leases.connections());
		this.guard = new CommitGuard(leases.connections());
		JdbcLockRepository impatient = new JdbcLockRepository(this.dataSource, database().dialect(this.dataSource),
				Duration.ofSeconds(1));
		this.impatientFair = new JdbcFairLockRepository(impatient.connections());
		this.impatientReadWrite = new JdbcReadWriteLockRepository(impatient.connections());
	}

	@AfterAll
	void closeDataSource() {
		if (this.dataSource != null) {
			this.dataSource.close();
		}
	}

	@BeforeEach
	@AfterEach
	void clean() {
		for (String table : List.of(TABLE + "_fair_queue", TABLE + "_rw")) {
			dropStall(table).forEach(this.jdbc::execute);
		}
		this.jdbc.update("DELETE FROM " + TABLE + "_fair_queue");
		this.jdbc.update("DELETE FROM " + TABLE + "_rw");
		this.jdbc.update("DELETE FROM " + TABLE + "_rw_intents");
	}

	@Test
	void nextTicketDoesNotPassAnEndedTicketWhoseRenewalCommitsLate() throws Exception {
		stall(TABLE + "_fair_queue");
		String key = "late-fair";
		FairLockRepository.Ticket late = this.fair.enqueue(key, LATE, SHORT_LEASE);
		FairLockRepository.Ticket next = this.fair.enqueue(key, "next", LONG_LEASE);
		CompletableFuture<List<Boolean>> renewal = CompletableFuture
			.supplyAsync(() -> this.fair.renewAll(List.of(late), LONG_LEASE));
		awaitStalledAndEnded("SELECT COUNT(*) FROM " + TABLE + "_fair_queue WHERE ticket = " + late.number());
		long head = this.fair.head(next);
		// the premise: the database found the first ticket's lease valid when it renewed it
		assertThat(renewal.get(30, TimeUnit.SECONDS)).containsExactly(true);
		assertThat(head).as("the head the next ticket saw").isNotEqualTo(next.number());
		assertThat(this.fair.head(late)).isEqualTo(late.number());
		assertThat(this.fair.head(next)).isEqualTo(late.number());
	}

	@Test
	void writerDoesNotPassAnEndedReaderWhoseRenewalCommitsLate() throws Exception {
		stall(TABLE + "_rw");
		String key = "late-reader";
		Lease reader = this.readWrite.tryRead(key, LATE, SHORT_LEASE).orElseThrow();
		CompletableFuture<Optional<java.time.Instant>> renewal = renewStalled(reader, false);
		ReadWriteLockRepository.WriteAttempt writer = this.readWrite.tryWrite(key, "writer", LONG_LEASE, false);
		assertThat(renewal.get(30, TimeUnit.SECONDS)).isPresent();
		assertThat(writer.lease()).as("the writer's hold").isNull();
	}

	@Test
	void readerDoesNotPassAnEndedWriterWhoseRenewalCommitsLate() throws Exception {
		stall(TABLE + "_rw");
		String key = "late-writer";
		Lease writer = this.readWrite.tryWrite(key, LATE, SHORT_LEASE, false).lease();
		assertThat(writer).isNotNull();
		CompletableFuture<Optional<java.time.Instant>> renewal = renewStalled(writer, true);
		Optional<Lease> reader = this.readWrite.tryRead(key, "reader", LONG_LEASE);
		assertThat(renewal.get(30, TimeUnit.SECONDS)).isPresent();
		assertThat(reader).as("the reader's hold").isEmpty();
	}

	@Test
	void writerDoesNotPassAnEndedWriterWhoseRenewalCommitsLate() throws Exception {
		stall(TABLE + "_rw");
		String key = "late-writers";
		Lease first = this.readWrite.tryWrite(key, LATE, SHORT_LEASE, false).lease();
		assertThat(first).isNotNull();
		CompletableFuture<Optional<java.time.Instant>> renewal = renewStalled(first, true);
		// the first writer's intent ended with its row (its renewal comes after the row's): the second takes it
		ReadWriteLockRepository.WriteAttempt second = this.readWrite.tryWrite(key, "second", LONG_LEASE, false);
		assertThat(renewal.get(30, TimeUnit.SECONDS)).isPresent();
		assertThat(second.intent()).as("the second writer took the ended intent").isTrue();
		assertThat(second.lease()).as("the second writer's hold").isNull();
	}

	@Test
	void nextTicketWhoseDeleteTimesOutIsNotYetTheHead() throws Exception {
		stall(TABLE + "_fair_queue");
		String key = "late-fair-impatient";
		FairLockRepository.Ticket late = this.fair.enqueue(key, LATE, SHORT_LEASE);
		FairLockRepository.Ticket next = this.impatientFair.enqueue(key, "next", LONG_LEASE);
		CompletableFuture<List<Boolean>> renewal = CompletableFuture
			.supplyAsync(() -> this.fair.renewAll(List.of(late), LONG_LEASE));
		awaitStalledAndEnded("SELECT COUNT(*) FROM " + TABLE + "_fair_queue WHERE ticket = " + late.number());
		// its delete waits for the stalled renewal past its statement timeout: not an error, not its turn yet
		assertThat(this.impatientFair.head(next)).isEqualTo(late.number());
		assertThat(renewal.get(30, TimeUnit.SECONDS)).containsExactly(true);
		assertThat(this.impatientFair.head(next)).isEqualTo(late.number());
	}

	@Test
	void writerWhoseDeleteTimesOutHasNotYetAcquired() throws Exception {
		stall(TABLE + "_rw");
		String key = "late-reader-impatient";
		Lease reader = this.readWrite.tryRead(key, LATE, SHORT_LEASE).orElseThrow();
		CompletableFuture<Optional<java.time.Instant>> renewal = renewStalled(reader, false);
		if (writerInsertWaitsForRowLocks()) {
			// the insert's own wait ends by the statement timeout (the server's or the network's): an error, as before
			assertThatExceptionOfType(org.springframework.dao.DataAccessException.class)
				.isThrownBy(() -> this.impatientReadWrite.tryWrite(key, "writer", LONG_LEASE, false));
		}
		else {
			ReadWriteLockRepository.WriteAttempt writer = this.impatientReadWrite.tryWrite(key, "writer", LONG_LEASE,
					false);
			assertThat(writer.intent()).isTrue();
			assertThat(writer.lease()).isNull();
		}
		assertThat(renewal.get(30, TimeUnit.SECONDS)).isPresent();
		assertThat(this.jdbc.queryForObject("SELECT COUNT(*) FROM " + TABLE + "_rw WHERE lock_key = '" + key
				+ "' AND owner = 'writer'", Integer.class)).isZero();
	}

	@Test
	void readerWhoseDeleteTimesOutHasNotYetAcquired() throws Exception {
		stall(TABLE + "_rw");
		String key = "late-writer-impatient";
		Lease writer = this.readWrite.tryWrite(key, LATE, SHORT_LEASE, false).lease();
		assertThat(writer).isNotNull();
		CompletableFuture<Optional<java.time.Instant>> renewal = renewStalled(writer, true);
		assertThat(this.impatientReadWrite.tryRead(key, "reader", LONG_LEASE)).isEmpty();
		assertThat(renewal.get(30, TimeUnit.SECONDS)).isPresent();
		// the reader's row was withdrawn
		assertThat(this.jdbc.queryForObject("SELECT COUNT(*) FROM " + TABLE + "_rw WHERE lock_key = '" + key
				+ "' AND owner = 'reader'", Integer.class)).isZero();
	}

	@Test
	void nextTicketWaitsForTheGuardedCommitOfAnEndedHead() throws Exception {
		String key = "guarded-fair";
		FairLockRepository.Ticket head = this.fair.enqueue(key, "guarded", SHORT_LEASE);
		FairLockRepository.Ticket next = this.fair.enqueue(key, "next", LONG_LEASE);
		long taken = takeOverDuringGuardedCommit(new HeldRow(HeldRow.Table.FAIR, key, "guarded", head.number()),
				"SELECT COUNT(*) FROM " + TABLE + "_fair_queue WHERE ticket = " + head.number(), () -> this.fair.head(next));
		assertThat(taken).isEqualTo(next.number());
	}

	@Test
	void writerWaitsForTheGuardedCommitOfAnEndedReader() throws Exception {
		String key = "guarded-reader";
		Lease reader = this.readWrite.tryRead(key, "guarded", SHORT_LEASE).orElseThrow();
		ReadWriteLockRepository.WriteAttempt writer = takeOverDuringGuardedCommit(
				new HeldRow(HeldRow.Table.READ_WRITE, key, "guarded", reader.token()),
				"SELECT COUNT(*) FROM " + TABLE + "_rw WHERE lock_key = '" + key + "' AND owner = 'guarded'",
				() -> this.readWrite.tryWrite(key, "writer", LONG_LEASE, false));
		assertThat(writer.lease()).isNotNull();
	}

	@Test
	void readerWaitsForTheGuardedCommitOfAnEndedWriter() throws Exception {
		String key = "guarded-writer";
		Lease writer = this.readWrite.tryWrite(key, "guarded", SHORT_LEASE, false).lease();
		assertThat(writer).isNotNull();
		Optional<Lease> reader = takeOverDuringGuardedCommit(
				new HeldRow(HeldRow.Table.READ_WRITE, key, "guarded", writer.token()),
				"SELECT COUNT(*) FROM " + TABLE + "_rw WHERE lock_key = '" + key + "' AND owner = 'guarded'",
				() -> this.readWrite.tryRead(key, "reader", LONG_LEASE));
		assertThat(reader).isPresent();
	}

	/**
	 * A transaction's commit guard finds the row held, and its commit is held back until the
	 * row's lease has ended and another caller's take-over is seen waiting for a lock; then
	 * it commits, and the take-over completes.
	 */
	private <T> T takeOverDuringGuardedCommit(HeldRow row, String rowSql, java.util.function.Supplier<T> takeOver)
			throws Exception {
		CompletableFuture<T> taking;
		try (java.sql.Connection transaction = this.dataSource.getConnection()) {
			transaction.setAutoCommit(false);
			assertThat(this.guard.notHeld(transaction, List.of(row))).as("rows the guard found not held").isEmpty();
			awaitEnded(rowSql);
			taking = CompletableFuture.supplyAsync(takeOver);
			await().atMost(Duration.ofSeconds(30))
				.until(() -> this.jdbc.queryForObject(lockWaitsSql(), Integer.class) == 1);
			assertThat(taking).as("the take-over, while the guarded transaction is open").isNotDone();
			transaction.commit();
		}
		return taking.get(30, TimeUnit.SECONDS);
	}

	/**
	 * Renews a read/write lease of {@link #LATE}'s, whose update stalls, and waits until it
	 * is stalled and the lease has ended.
	 */
	private CompletableFuture<Optional<java.time.Instant>> renewStalled(Lease lease, boolean writer) {
		CompletableFuture<Optional<java.time.Instant>> renewal = CompletableFuture
			.supplyAsync(() -> this.readWrite.renew(lease, LONG_LEASE, writer));
		awaitStalledAndEnded("SELECT COUNT(*) FROM " + TABLE + "_rw WHERE lock_key = '" + lease.key() + "' AND owner = '"
				+ LATE + "'");
		return renewal;
	}

	/**
	 * Waits until the renewal sleeps in the trigger, its row's lock taken, and until a plain
	 * read (which does not wait for that lock) finds the row's lease ended.
	 */
	private void awaitStalledAndEnded(String rowSql) {
		await().atMost(Duration.ofSeconds(STALL_SECONDS))
			.until(() -> this.jdbc.queryForObject(sleepingSessionsSql(), Integer.class) == 1);
		awaitEnded(rowSql);
		assertThat(this.jdbc.queryForObject(sleepingSessionsSql(), Integer.class))
			.as("the renewal still sleeping in the trigger")
			.isEqualTo(1);
	}

	private void stall(String table) {
		List<String> statements = createStall(table);
		org.junit.jupiter.api.Assumptions.assumeFalse(statements.isEmpty(),
				database() + " has no trigger that sleeps in these tests");
		statements.forEach(this.jdbc::execute);
	}

	/** Waits until a plain read, which does not wait for a row's lock, finds its lease ended. */
	private void awaitEnded(String rowSql) {
		String dialectNow = database().dialect(this.dataSource).now();
		await().atMost(Duration.ofSeconds(STALL_SECONDS))
			.pollInterval(Duration.ofMillis(20))
			.until(() -> this.jdbc.queryForObject(rowSql + " AND expires_at > " + dialectNow, Integer.class) == 0);
	}

}
