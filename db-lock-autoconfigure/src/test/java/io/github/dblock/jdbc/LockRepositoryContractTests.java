package io.github.dblock.jdbc;

import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import com.zaxxer.hikari.HikariDataSource;
import io.github.dblock.jdbc.dialect.PostgreSqlDialect;
import io.github.dblock.jdbc.dialect.SqlDialect;
import io.github.dblock.testsupport.DatabaseClock;
import io.github.dblock.testsupport.Concurrently;
import io.github.dblock.testsupport.TestDatabase;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.assertj.core.api.Assumptions.assumeThat;
import static org.awaitility.Awaitility.await;

/**
 * The contract of {@link LockRepository}, run against every database by a subclass that
 * names it.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@ExtendWith(OutputCaptureExtension.class)
abstract class LockRepositoryContractTests {

	private static final Duration LONG_LEASE = Duration.ofSeconds(30);

	private HikariDataSource dataSource;

	private JdbcTemplate jdbc;

	private SqlDialect dialect;

	private JdbcLockRepository repository;

	protected abstract TestDatabase database();

	@BeforeAll
	void createRepository() {
		this.dataSource = database().dataSource(12);
		this.jdbc = new JdbcTemplate(this.dataSource);
		this.dialect = database().dialect(this.dataSource);
		this.repository = new JdbcLockRepository(this.dataSource, this.dialect);
	}

	@AfterAll
	void closeDataSource() {
		if (this.dataSource != null) {
			this.dataSource.close();
		}
	}

	@BeforeEach
	void emptyTable() {
		this.jdbc.update("DELETE FROM " + TestDatabase.TABLE);
	}

	@Test
	void contentionLeavesNothingInTheLog(CapturedOutput output) {
		assertThat(this.repository.tryAcquire("quiet", "owner-a", Duration.ofSeconds(30))).isPresent();
		for (int i = 0; i < 20; i++) {
			assertThat(this.repository.tryAcquire("quiet", "owner-b" + i, Duration.ofSeconds(30))).isEmpty();
		}
		assertThat(output.getAll()).doesNotContain("Duplicate").doesNotContain("duplicate key");
	}

	@Test
	void noAttemptIsSentOnceTheCallsDeadlineHasPassed() {
		// the call's wait ended longer ago than the statement timeout: its time is up
		try (StatementDeadline deadline = StatementDeadline
			.open(System.nanoTime() - JdbcLockRepository.DEFAULT_STATEMENT_TIMEOUT.plusSeconds(1).toNanos())) {
			assertThat(this.repository.tryAcquire("too-late", "owner-1", LONG_LEASE)).isEmpty();
		}
		assertThat(this.jdbc.queryForObject("SELECT COUNT(*) FROM db_lock WHERE lock_key = ?", Long.class, "too-late"))
			.isZero();
		// the deadline closed with its call: the next call's attempt is sent
		assertThat(this.repository.tryAcquire("too-late", "owner-1", LONG_LEASE)).isPresent();
	}

	@Test
	void aLockStatementWaitsForAPoolConnectionNoLongerThanWhatIsLeftOfItsTime() throws Exception {
		// Hikari's default 30 s connection timeout, every connection held by someone else
		Duration statementTimeout = Duration.ofSeconds(1);
		try (HikariDataSource pool = database().dataSource(2)) {
			JdbcLockRepository repository = new JdbcLockRepository(pool, this.dialect, statementTimeout);
			Lease lease = repository.tryAcquire("pool-held", "owner-1", LONG_LEASE).orElseThrow();
			try (Connection first = pool.getConnection(); Connection second = pool.getConnection()) {
				// outside a call (a release): the statement timeout, its wait for a connection included
				long start = System.nanoTime();
				Throwable releaseFailure = catchThrowable(() -> repository.release(lease, Duration.ZERO));
				long releaseMillis = Duration.ofNanos(System.nanoTime() - start).toMillis();
				// inside a call whose wait has 2 s left: those and the statement timeout
				start = System.nanoTime();
				Throwable attemptFailure;
				try (StatementDeadline deadline = StatementDeadline.open(System.nanoTime() + Duration.ofSeconds(2).toNanos())) {
					attemptFailure = catchThrowable(() -> repository.tryAcquire("pool-held-2", "owner-2", LONG_LEASE));
				}
				long attemptMillis = Duration.ofNanos(System.nanoTime() - start).toMillis();
				System.out.println("pool held: the release gave up after " + releaseMillis
						+ " ms (bound 1000 ms + 1 s), the attempt with 2 s of its wait left after "
						+ attemptMillis + " ms (bound 2000 ms + 1000 ms + 1 s)");
				assertThat(releaseFailure).isInstanceOf(DataAccessException.class).hasMessageContaining("no free connection");
				assertThat(attemptFailure).isInstanceOf(DataAccessException.class).hasMessageContaining("no free connection");
				// no validation here: the connections are all held, none is handed out
				assertThat(releaseMillis).isLessThanOrEqualTo(statementTimeout.plusSeconds(1).toMillis());
				assertThat(attemptMillis).isLessThanOrEqualTo(statementTimeout.plusSeconds(3).toMillis());
			}
		}
	}

	@Test
	void aStatementIsCutToWhatIsLeftOfTheCallsDeadline() throws Exception {
		// embedded H2 waits for a row lock up to its LOCK_TIMEOUT whatever the statement's time limit
		assumeThat(database()).isNotIn(TestDatabase.H2, TestDatabase.H2_MYSQL_MODE, TestDatabase.H2_POSTGRESQL_MODE);
		Duration statementTimeout = Duration.ofSeconds(30);
		Duration left = Duration.ofSeconds(1);
		JdbcLockRepository repository = new JdbcLockRepository(this.dataSource, this.dialect, statementTimeout);
		Lease lease = repository.tryAcquire("row-locked", "owner-1", LONG_LEASE).orElseThrow();
		try (Connection foreign = this.dataSource.getConnection()) {
			foreign.setAutoCommit(false);
			try (Statement statement = foreign.createStatement()) {
				statement.executeQuery("SELECT * FROM db_lock WHERE lock_key = 'row-locked' FOR UPDATE").close();
				long start = System.nanoTime();
				Throwable failure;
				// the release waits for the row lock: a second is left of its call's time, not 30
				try (StatementDeadline deadline = StatementDeadline
					.open(System.nanoTime() - statementTimeout.minus(left).toNanos())) {
					failure = catchThrowable(() -> repository.release(lease, Duration.ZERO));
				}
				Duration took = Duration.ofNanos(System.nanoTime() - start);
				assertThat(failure).isInstanceOf(DataAccessException.class);
				// not before what was left; and not the statement timeout, which would be 30 s
				assertThat(took).isGreaterThanOrEqualTo(left.minusMillis(100)).isLessThan(statementTimeout.dividedBy(2));
			}
			finally {
				foreign.rollback();
			}
		}
		// the pool replaced the connection a cut statement may have broken (that statement may
		// still have committed once the row was free: its outcome is not known to the caller)
		assertThat(repository.tryAcquire("after-the-cut", "owner-2", LONG_LEASE)).isPresent();
	}

	/**
	 * A statement timeout under a second is still a limit the server enforces (as a query
	 * timeout of one second), never none: an attempt the client gave up on is ended by the
	 * server instead of waiting for a row lock and committing after its caller left.
	 */
	@Test
	void aStatementTimeoutUnderASecondIsStillEnforcedByTheServer() throws Exception {
		// the MySQL family enforces the JDBC query timeout in the server; PostgreSQL's driver
		// sends a cancel, which it never sends once the network timeout closed the connection
		assumeThat(database()).isIn(TestDatabase.MARIADB, TestDatabase.MYSQL);
		JdbcLockRepository repository = new JdbcLockRepository(this.dataSource, this.dialect, Duration.ofMillis(500));
		repository.tryAcquire("sub-second", "holder", Duration.ofMillis(1)).orElseThrow();
		int stillRunning = 0;
		try (Connection foreign = this.dataSource.getConnection()) {
			foreign.setAutoCommit(false);
			try (Statement statement = foreign.createStatement()) {
				// the expired row is locked: the attempt waits for it, past its statement timeout
				statement.executeQuery("SELECT * FROM db_lock WHERE lock_key = 'sub-second' FOR UPDATE").close();
				assertThat(catchThrowable(() -> repository.tryAcquire("sub-second", "orphan-sub-second", LONG_LEASE)))
					.isInstanceOf(DataAccessException.class);
				long since = System.nanoTime();
				while (serverStatements("orphan-sub-second") > 0) {
					if (System.nanoTime() - since > Duration.ofSeconds(5).toNanos()) {
						stillRunning++;
						break;
					}
					Thread.onSpinWait();
				}
			}
			finally {
				foreign.rollback();
			}
		}
		int landed = this.jdbc.queryForObject("SELECT COUNT(*) FROM db_lock WHERE owner = 'orphan-sub-second'",
				Integer.class);
		System.out.println(database() + " statement timeout 500 ms, an attempt blocked by a row lock: "
				+ stillRunning + " still running in the server 5 s after its caller gave up, " + landed
				+ " rows it wrote once the row was free");
		assertThat(stillRunning).isZero();
		assertThat(landed).isZero();
	}

	private int serverStatements(String owner) {
		return this.jdbc.queryForObject("SELECT COUNT(*) FROM information_schema.processlist WHERE info LIKE ? "
				+ "AND id <> CONNECTION_ID()", Integer.class, "%" + owner + "%");
	}

	@Test
	void acquiresAFreeKeyWithALeaseInDatabaseTime() {
		Instant before = DatabaseClock.now(this.jdbc, this.dialect);
		Lease lease = this.repository.tryAcquire("free", "owner-1", LONG_LEASE).orElseThrow();
		Instant after = DatabaseClock.now(this.jdbc, this.dialect);
		assertThat(lease.key()).isEqualTo("free");
		assertThat(lease.owner()).isEqualTo("owner-1");
		assertThat(lease.token()).isPositive();
		// MySQL reports an estimate that errs early; the others read the row's own value
		assertThat(lease.expiresAt()).isBetween(before.plus(LONG_LEASE).minusSeconds(1), after.plus(LONG_LEASE));
		assertThat(this.jdbc.queryForObject("SELECT owner FROM db_lock WHERE lock_key = ?", String.class, "free"))
			.isEqualTo("owner-1");
	}

	@Test
	void aRenewalForANewHolderAlsoSetsTheStartToTheDatabasesNowAndAPlainOneLeavesIt() {
		Lease a = this.repository.tryAcquire("start-a", "owner-a", LONG_LEASE).orElseThrow();
		Lease b = this.repository.tryAcquire("start-b", "owner-b", LONG_LEASE).orElseThrow();
		Lease c = this.repository.tryAcquire("start-c", "owner-c", LONG_LEASE).orElseThrow();
		Instant aStart = start("start-a");
		Instant cStart = start("start-c");
		await().atMost(Duration.ofSeconds(10))
			.until(() -> DatabaseClock.now(this.jdbc, this.dialect).isAfter(start("start-b").plusMillis(10)));
		Instant before = DatabaseClock.now(this.jdbc, this.dialect);
		assertThat(this.repository.renew(a, LONG_LEASE, false)).isPresent();
		assertThat(this.repository.renew(b, LONG_LEASE, true)).isPresent();
		assertThat(start("start-a")).isEqualTo(aStart);
		assertThat(start("start-b")).isAfterOrEqualTo(before);
		assertThat(this.repository.renewAll(List.of(a, c), LONG_LEASE, false)).allMatch(Optional::isPresent);
		assertThat(start("start-a")).isEqualTo(aStart);
		assertThat(start("start-c")).isEqualTo(cStart);
		assertThat(this.repository.renewAll(List.of(a, c), LONG_LEASE, true)).allMatch(Optional::isPresent);
		assertThat(start("start-a")).isAfterOrEqualTo(before);
		assertThat(start("start-c")).isAfterOrEqualTo(before);
		// both from the database's now of one statement (PostgreSQL's clock_timestamp() moves within it)
		LockRow row = this.repository.rows(10).stream().filter((r) -> r.key().equals("start-c")).findFirst().orElseThrow();
		assertThat(Duration.between(row.acquiredAt(), row.expiresAt())).isBetween(LONG_LEASE, LONG_LEASE.plusSeconds(1));
	}

	private Instant start(String key) {
		return this.repository.rows(100)
			.stream()
			.filter((row) -> row.key().equals(key))
			.findFirst()
			.orElseThrow()
			.acquiredAt();
	}

	@Test
	void rowsAreReadInKeyOrderUpToTheLimit() {
		Lease second = this.repository.tryAcquire("rows-b", "owner-b", LONG_LEASE).orElseThrow();
		Lease first = this.repository.tryAcquire("rows-a", "owner-a", LONG_LEASE).orElseThrow();
		this.repository.tryAcquire("rows-c", "owner-c", LONG_LEASE).orElseThrow();
		List<LockRow> rows = this.repository.rows(2);
		assertThat(rows).extracting(LockRow::key).containsExactly("rows-a", "rows-b");
		LockRow row = rows.get(0);
		assertThat(row.owner()).isEqualTo("owner-a");
		assertThat(row.token()).isEqualTo(first.token());
		assertThat(row.expiresAt()).isAfter(row.acquiredAt());
		assertThat(rows.get(1).token()).isEqualTo(second.token());
		assertThat(this.repository.rows(10)).hasSize(3);
	}

	@Test
	void aHeldKeyIsNotAcquiredByAnotherOwner() {
		Lease held = this.repository.tryAcquire("held", "owner-1", LONG_LEASE).orElseThrow();
		assertThat(this.repository.tryAcquire("held", "owner-2", LONG_LEASE)).isEmpty();
		assertThat(this.jdbc.queryForObject("SELECT token FROM db_lock WHERE lock_key = ?", Long.class, "held"))
			.isEqualTo(held.token());
	}

	@Test
	void anExpiredLeaseIsTakenOverWithALargerToken() {
		Lease first = this.repository.tryAcquire("expiring", "owner-1", Duration.ofMillis(200)).orElseThrow();
		assertThat(this.repository.tryAcquire("expiring", "owner-2", LONG_LEASE)).isEmpty();
		Lease second = await().atMost(Duration.ofSeconds(10))
			.pollInterval(Duration.ofMillis(20))
			.until(() -> this.repository.tryAcquire("expiring", "owner-2", LONG_LEASE), Optional::isPresent)
			.orElseThrow();
		assertThat(second.owner()).isEqualTo("owner-2");
		assertThat(second.token()).isGreaterThan(first.token());
		assertThat(DatabaseClock.now(this.jdbc, this.dialect)).isAfterOrEqualTo(first.expiresAt());
	}

	@Test
	void anAttemptOnAHeldKeyMarksItWantedAndTheHolderCanCedeIt() {
		Lease held = this.repository.tryAcquire("wanted", "owner-1", LONG_LEASE).orElseThrow();
		assertThat(this.repository.cede(held, Duration.ofSeconds(5))).isFalse();
		assertThat(this.repository.renew(held, LONG_LEASE)).isPresent();
		assertThat(this.repository.tryAcquire("wanted", "owner-2", LONG_LEASE)).isEmpty();
		// only with the holder's owner and token
		assertThat(this.repository.cede(new Lease("wanted", "owner-2", held.token(), held.expiresAt()),
				Duration.ofSeconds(5)))
			.isFalse();
		assertThat(this.repository.cede(new Lease("wanted", "owner-1", held.token() + 1, held.expiresAt()),
				Duration.ofSeconds(5)))
			.isFalse();
		assertThat(this.repository.cede(held, Duration.ofSeconds(5))).isTrue();
		assertThat(this.repository.tryAcquire("wanted", "owner-2", LONG_LEASE)).isPresent();
	}

	@Test
	void anAttemptOlderThanTheWindowDoesNotCount() {
		Lease held = this.repository.tryAcquire("long-ago", "owner-1", LONG_LEASE).orElseThrow();
		assertThat(this.repository.tryAcquire("long-ago", "owner-2", LONG_LEASE)).isEmpty();
		java.time.Instant marked = DatabaseClock.now(this.jdbc, this.dialect);
		await().atMost(Duration.ofSeconds(10))
			.pollInterval(Duration.ofMillis(20))
			.until(() -> DatabaseClock.now(this.jdbc, this.dialect).isAfter(marked.plusMillis(300)));
		assertThat(this.repository.cede(held, Duration.ofMillis(200))).isFalse();
		assertThat(this.repository.renew(held, LONG_LEASE)).isPresent();
	}

	@Test
	void theTakeOverOfAnExpiredLeaseClearsTheMark() {
		Lease first = this.repository.tryAcquire("mark-cleared", "owner-1", Duration.ofMillis(200)).orElseThrow();
		assertThat(this.repository.tryAcquire("mark-cleared", "owner-2", LONG_LEASE)).isEmpty();
		Lease second = await().atMost(Duration.ofSeconds(10))
			.pollInterval(Duration.ofMillis(20))
			.until(() -> this.repository.tryAcquire("mark-cleared", "owner-2", LONG_LEASE), Optional::isPresent)
			.orElseThrow();
		assertThat(second.token()).isGreaterThan(first.token());
		assertThat(this.repository.cede(second, Duration.ofSeconds(5))).isFalse();
		assertThat(this.repository.cede(first, Duration.ofSeconds(5))).isFalse();
		assertThat(this.repository.tryAcquire("mark-cleared", "owner-3", LONG_LEASE)).isEmpty();
	}

	@Test
	void onlyTheOwnerWithItsTokenReleases() {
		Lease lease = this.repository.tryAcquire("owned", "owner-1", LONG_LEASE).orElseThrow();
		assertThat(this.repository.release(new Lease("owned", "owner-2", lease.token(), lease.expiresAt()),
				Duration.ZERO))
			.isFalse();
		assertThat(this.repository.release(new Lease("owned", "owner-1", lease.token() + 1, lease.expiresAt()),
				Duration.ZERO))
			.isFalse();
		assertThat(this.repository.tryAcquire("owned", "owner-2", LONG_LEASE)).isEmpty();
		assertThat(this.repository.release(lease, Duration.ZERO)).isTrue();
		assertThat(this.repository.release(lease, Duration.ZERO)).isFalse();
		assertThat(this.repository.tryAcquire("owned", "owner-2", LONG_LEASE)).isPresent();
	}

	@Test
	void theReleaseOfATakenOverLeaseLeavesTheNewHolder() {
		Lease old = this.repository.tryAcquire("taken-over", "owner-1", Duration.ofMillis(100)).orElseThrow();
		Lease current = await().atMost(Duration.ofSeconds(10))
			.pollInterval(Duration.ofMillis(20))
			.until(() -> this.repository.tryAcquire("taken-over", "owner-2", LONG_LEASE), Optional::isPresent)
			.orElseThrow();
		assertThat(this.repository.release(old, Duration.ZERO)).isFalse();
		assertThat(this.jdbc.queryForObject("SELECT owner FROM db_lock WHERE lock_key = ?", String.class,
				"taken-over"))
			.isEqualTo(current.owner());
	}

	@Test
	void tokensIncreaseAcrossReleaseExpiryAndRowCleanUp() {
		List<Long> tokens = new ArrayList<>();
		Lease released = this.repository.tryAcquire("fenced", "o1", LONG_LEASE).orElseThrow();
		tokens.add(released.token());
		this.repository.release(released, Duration.ZERO);
		tokens.add(this.repository.tryAcquire("fenced", "o2", Duration.ofMillis(50)).orElseThrow().token());
		tokens.add(await().atMost(Duration.ofSeconds(10))
			.pollInterval(Duration.ofMillis(20))
			.until(() -> this.repository.tryAcquire("fenced", "o3", LONG_LEASE), Optional::isPresent)
			.orElseThrow()
			.token());
		this.jdbc.update("DELETE FROM db_lock");
		tokens.add(this.repository.tryAcquire("fenced", "o4", LONG_LEASE).orElseThrow().token());
		assertThat(tokens).isSorted().doesNotHaveDuplicates();
	}

	@Test
	void keysDifferingInCaseOrTrailingSpaceAreDifferentLocks() {
		assertThat(this.repository.tryAcquire("Order-1", "o1", LONG_LEASE)).isPresent();
		assertThat(this.repository.tryAcquire("order-1", "o2", LONG_LEASE)).isPresent();
		assertThat(this.repository.tryAcquire("order-1 ", "o3", LONG_LEASE)).isPresent();
	}

	@Test
	void aKeyOfTheMaximumLengthIsStored() {
		String key = "k".repeat(this.repository.maxKeyLength() - 1) + "\u00e9";
		Lease lease = this.repository.tryAcquire(key, "o1", LONG_LEASE).orElseThrow();
		assertThat(this.jdbc.queryForObject("SELECT lock_key FROM db_lock", String.class)).isEqualTo(key);
		assertThat(this.repository.release(lease, Duration.ZERO)).isTrue();
	}

	@Test
	void aLockWaitTimeoutIsAnAttemptThatDidNotAcquire() throws Exception {
		try (HikariDataSource impatient = database().impatientDataSource(2);
				java.sql.Connection blocker = this.dataSource.getConnection()) {
			blocker.setAutoCommit(false);
			JdbcTemplate inOpenTransaction = new JdbcTemplate(
					new org.springframework.jdbc.datasource.SingleConnectionDataSource(blocker, true));
			assertThat(this.dialect.tryAcquire(inOpenTransaction, "blocked", "uncommitted", LONG_LEASE)).isPresent();
			try {
				JdbcLockRepository impatientRepository = new JdbcLockRepository(impatient, this.dialect);
				assertThat(impatientRepository.tryAcquire("blocked", "o2", LONG_LEASE)).isEmpty();
			}
			finally {
				blocker.rollback();
			}
		}
		assertThat(this.repository.tryAcquire("blocked", "o3", LONG_LEASE)).isPresent();
	}

	/**
	 * An attempt stalled after its values were evaluated and before its row's insert (a
	 * test-only {@code BEFORE INSERT} trigger holds it) while another owner acquires and
	 * releases the key: whichever holds later holds with the larger token.
	 */
	@Test
	void anAttemptStalledBeforeItsInsertGetsALargerTokenThanEveryEarlierHolder() throws Exception {
		// InnoDB draws AUTO_INCREMENT after the BEFORE triggers: no trigger stalls it between its draw and its insert
		assumeThat(database()).isNotIn(TestDatabase.MARIADB, TestDatabase.MYSQL);
		String key = "stalled-draw";
		List<Lease> holds = Collections.synchronizedList(new ArrayList<>());
		ExecutorService threads = Executors.newFixedThreadPool(2);
		try (InsertStall stall = stallMarkedInserts(TestDatabase.TABLE)) {
			Future<Optional<Lease>> stalled = threads
				.submit(() -> this.repository.tryAcquire(key, StallingInsertTrigger.MARK + "b", LONG_LEASE));
			stall.awaitStalled();
			Future<?> other = threads.submit(() -> {
				long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
				Optional<Lease> lease;
				while ((lease = this.repository.tryAcquire(key, "other-c", LONG_LEASE)).isEmpty()) {
					assertThat(System.nanoTime()).as("other-c acquired within a minute").isLessThan(until);
					Thread.onSpinWait();
				}
				holds.add(lease.get());
				assertThat(this.repository.release(lease.get(), Duration.ZERO)).isTrue();
				return null;
			});
			// the other attempt has held and released the key, or waits for the stalled one
			await().atMost(Duration.ofSeconds(30))
				.pollInterval(Duration.ofMillis(10))
				.until(() -> other.isDone() || stall.anotherSessionWaits());
			stall.open();
			Optional<Lease> lease = stalled.get(1, TimeUnit.MINUTES);
			if (lease.isPresent()) {
				holds.add(lease.get());
				assertThat(this.repository.release(lease.get(), Duration.ZERO)).isTrue();
			}
			other.get(1, TimeUnit.MINUTES);
		}
		finally {
			threads.shutdownNow();
		}
		List<Long> tokens = holds.stream().map(Lease::token).toList();
		System.out.println(database() + ": holds of '" + key + "' in order: "
				+ holds.stream().map((hold) -> hold.owner() + "=" + hold.token()).toList());
		long outOfOrder = java.util.stream.IntStream.range(1, tokens.size())
			.filter((i) -> tokens.get(i) <= tokens.get(i - 1))
			.count();
		System.out.println(database() + ": tokens out of order: " + outOfOrder);
		assertThat(outOfOrder).isZero();
	}

	/**
	 * The read/write table's form of
	 * {@link #anAttemptStalledBeforeItsInsertGetsALargerTokenThanEveryEarlierHolder()}: a
	 * reader stalled after its values were evaluated and before its row's insert while a
	 * writer of another owner announces itself, acquires and releases the key: if the reader
	 * holds, it holds with a larger token than the writer's.
	 */
	/**
	 * PostgreSQL: a writer's insert that waited for the key's advisory lock while a reader's
	 * row committed (here the test's own transaction holds the lock, writes a reader's row and
	 * commits) sees that row: the writer is refused. Before, the insert's snapshot, taken
	 * before its wait, missed the row; the writer held with a larger token, and the reader,
	 * whose check came after the writer's release, then held with a smaller one.
	 */
	@Test
	void aWriterWhoseInsertWaitedForTheKeySeesAReaderRowCommittedMeanwhile() throws Exception {
		assumeThat(database()).isEqualTo(TestDatabase.POSTGRESQL);
		String key = "rw-snapshot";
		ReadWriteLockRepository readWrite = new JdbcReadWriteLockRepository(this.repository.connections());
		Object[] lock = ((PostgreSqlDialect) this.dialect).tokenOrderLock(TestDatabase.TABLE + "_rw", key);
		ExecutorService threads = Executors.newSingleThreadExecutor();
		Optional<Lease> writer;
		try (java.sql.Connection holding = this.dataSource.getConnection()) {
			holding.setAutoCommit(false);
			try (java.sql.PreparedStatement take = holding.prepareStatement("SELECT pg_advisory_xact_lock(?, ?)")) {
				take.setObject(1, lock[0]);
				take.setObject(2, lock[1]);
				take.executeQuery().close();
			}
			// the writer announces itself and sends its insert, which waits for the key's lock
			Future<Optional<Lease>> attempt = threads.submit(() -> Optional
				.ofNullable(readWrite.tryWrite(key, "writer-1", LONG_LEASE, false).lease()));
			await().atMost(Duration.ofSeconds(30)).until(() -> this.jdbc.queryForObject(
					"SELECT COUNT(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted", Integer.class) > 0);
			// a reader's row, drawn and committed while the writer's insert waits
			try (java.sql.PreparedStatement reader = holding.prepareStatement("INSERT INTO " + TestDatabase.TABLE
					+ "_rw (lock_key, owner, token, kind, acquired_at, expires_at) VALUES (?, 'reader-1', nextval('"
					+ TestDatabase.TABLE + "_token_seq'), 'R', clock_timestamp(), clock_timestamp() + INTERVAL '1 minute')")) {
				reader.setString(1, key);
				reader.executeUpdate();
			}
			holding.commit();
			writer = attempt.get(30, TimeUnit.SECONDS);
		}
		finally {
			threads.shutdownNow();
			this.jdbc.update("DELETE FROM " + TestDatabase.TABLE + "_rw WHERE lock_key = ?", key);
			this.jdbc.update("DELETE FROM " + TestDatabase.TABLE + "_rw_intents WHERE lock_key = ?", key);
		}
		System.out.println(database() + ": a writer whose insert waited while a reader's row committed "
				+ (writer.isPresent() ? "held the key beside it (token " + writer.get().token() + ")" : "was refused"));
		assertThat(writer).isEmpty();
	}

	@Test
	void aReaderStalledBeforeItsInsertGetsALargerTokenThanEveryEarlierWriter() throws Exception {
		// InnoDB draws AUTO_INCREMENT after the BEFORE triggers: no trigger stalls it between its draw and its insert
		assumeThat(database()).isNotIn(TestDatabase.MARIADB, TestDatabase.MYSQL);
		String key = "stalled-rw-draw";
		ReadWriteLockRepository readWrite = new JdbcReadWriteLockRepository(this.repository.connections());
		List<Lease> holds = Collections.synchronizedList(new ArrayList<>());
		ExecutorService threads = Executors.newFixedThreadPool(2);
		try (InsertStall stall = stallMarkedInserts(TestDatabase.TABLE + "_rw")) {
			Future<Optional<Lease>> stalled = threads
				.submit(() -> readWrite.tryRead(key, StallingInsertTrigger.MARK + "reader", LONG_LEASE));
			stall.awaitStalled();
			Future<?> other = threads.submit(() -> {
				long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
				boolean again = false;
				Lease lease;
				while ((lease = readWrite.tryWrite(key, "other-writer", LONG_LEASE, again).lease()) == null) {
					assertThat(System.nanoTime()).as("other-writer acquired within a minute").isLessThan(until);
					again = true;
					Thread.onSpinWait();
				}
				holds.add(lease);
				assertThat(readWrite.release(lease, true)).isTrue();
				return null;
			});
			// the writer has held and released the key, or waits for the stalled reader
			await().atMost(Duration.ofSeconds(30))
				.pollInterval(Duration.ofMillis(10))
				.until(() -> other.isDone() || stall.anotherSessionWaits());
			stall.open();
			Optional<Lease> lease = stalled.get(1, TimeUnit.MINUTES);
			if (lease.isPresent()) {
				holds.add(lease.get());
				assertThat(readWrite.release(lease.get(), false)).isTrue();
			}
			other.get(1, TimeUnit.MINUTES);
		}
		finally {
			threads.shutdownNow();
		}
		List<Long> tokens = holds.stream().map(Lease::token).toList();
		System.out.println(database() + ": read/write holds of '" + key + "' in order: "
				+ holds.stream().map((hold) -> hold.owner() + "=" + hold.token()).toList());
		long outOfOrder = java.util.stream.IntStream.range(1, tokens.size())
			.filter((i) -> tokens.get(i) <= tokens.get(i - 1))
			.count();
		System.out.println(database() + ": read/write tokens out of order: " + outOfOrder);
		assertThat(holds).as("the writer held").extracting(Lease::owner).contains("other-writer");
		assertThat(outOfOrder).isZero();
	}

	/**
	 * A read/write renewal that reaches the database after the lease ended (sent in time, then
	 * stalled) does not bring the row back: another writer may have inserted its own row
	 * meanwhile, and two live writers would hold the key.
	 */
	@Test
	void aReadWriteRenewalNeverRevivesARowWhoseLeaseEnded() {
		ReadWriteLockRepository readWrite = new JdbcReadWriteLockRepository(this.repository.connections());
		String key = "rw-ended-renewal";
		try {
			Lease writer = readWrite.tryWrite(key, "ended-writer", LONG_LEASE, false).lease();
			Lease reader = readWrite.tryRead(key + "-read", "ended-reader", LONG_LEASE).orElseThrow();
			assertThat(writer).isNotNull();
			this.jdbc.update("UPDATE " + TestDatabase.TABLE + "_rw SET expires_at = " + this.dialect.now()
					+ " WHERE lock_key LIKE ?", key + "%");
			assertThat(readWrite.renew(writer, LONG_LEASE, true)).isEmpty();
			assertThat(readWrite.renew(reader, LONG_LEASE, false)).isEmpty();
			assertThat(readWrite.renewAll(List.of(writer, reader), LONG_LEASE, Set.of(writer.owner())))
				.containsExactly(Optional.empty(), Optional.empty());
			Integer live = this.jdbc.queryForObject("SELECT COUNT(*) FROM " + TestDatabase.TABLE + "_rw WHERE lock_key LIKE ? "
					+ "AND expires_at > " + this.dialect.now(), Integer.class, key + "%");
			assertThat(live).isZero();
		}
		finally {
			this.jdbc.update("DELETE FROM " + TestDatabase.TABLE + "_rw WHERE lock_key LIKE ?", key + "%");
			this.jdbc.update("DELETE FROM " + TestDatabase.TABLE + "_rw_intents WHERE lock_key LIKE ?", key + "%");
		}
	}

	/**
	 * Where a reader's token is drawn by a statement after its insert (H2), a reader stalled
	 * right after that draw, before it commits (here in a test-only {@code AFTER UPDATE}
	 * trigger), and a writer that tries the key meanwhile: the writer must not take the key
	 * with a larger token than the reader's and release it before the reader holds it with
	 * the smaller one. A reader's row is in the table before its token is drawn, so the writer
	 * is refused.
	 */
	@Test
	void aReaderStalledAfterItsDrawKeepsTokensInOrderWithAWriter() throws Exception {
		assumeThat(this.dialect.readWriteStatements().drawReaderToken()).isNotNull();
		String key = "stalled-rw-after-draw";
		ReadWriteLockRepository readWrite = new JdbcReadWriteLockRepository(this.repository.connections());
		List<Lease> holds = new ArrayList<>();
		StallingInsertTrigger.arm();
		this.jdbc.execute("DROP TRIGGER IF EXISTS db_lock_test_stall");
		this.jdbc.execute("CREATE TRIGGER db_lock_test_stall AFTER UPDATE ON " + TestDatabase.TABLE
				+ "_rw FOR EACH ROW CALL '" + StallingInsertTrigger.class.getName() + "'");
		ExecutorService threads = Executors.newSingleThreadExecutor();
		try {
			Future<Optional<Lease>> stalled = threads
				.submit(() -> readWrite.tryRead(key, StallingInsertTrigger.MARK + "reader", LONG_LEASE));
			assertThat(StallingInsertTrigger.stalled.await(30, TimeUnit.SECONDS)).as("stalled").isTrue();
			Lease writer = readWrite.tryWrite(key, "other-writer", LONG_LEASE, false).lease();
			if (writer != null) {
				holds.add(writer);
				assertThat(readWrite.release(writer, true)).isTrue();
			}
			else {
				readWrite.withdraw(key, "other-writer");
			}
			StallingInsertTrigger.gate.countDown();
			Optional<Lease> reader = stalled.get(1, TimeUnit.MINUTES);
			reader.ifPresent(holds::add);
			reader.ifPresent((lease) -> assertThat(readWrite.release(lease, false)).isTrue());
		}
		finally {
			StallingInsertTrigger.gate.countDown();
			this.jdbc.execute("DROP TRIGGER IF EXISTS db_lock_test_stall");
			threads.shutdownNow();
			this.jdbc.update("DELETE FROM " + TestDatabase.TABLE + "_rw WHERE lock_key = ?", key);
			this.jdbc.update("DELETE FROM " + TestDatabase.TABLE + "_rw_intents WHERE lock_key = ?", key);
		}
		System.out.println(database() + ": read/write holds of '" + key + "' in order: "
				+ holds.stream().map((hold) -> hold.owner() + "=" + hold.token()).toList());
		assertThat(holds).as("the reader held").extracting(Lease::owner).contains(StallingInsertTrigger.MARK + "reader");
		assertThat(holds).extracting(Lease::token).isSorted().doesNotHaveDuplicates();
	}

	/**
	 * InnoDB allocates an {@code AUTO_INCREMENT} value in the insert before the row's index
	 * insert, and no trigger runs between the two. An acquire whose index insert waits (a gap
	 * of the primary key locked by the test's open transaction) while another key is
	 * acquired: the other key's insert must not complete with a later token before the
	 * stalled one's completes with its earlier token. Inserts done before the gate opens must
	 * hold tokens below every insert done after it.
	 */
	@Test
	void aTokenDrawnOnInnoDbIsInsertedBeforeAnyLaterDraw() throws Exception {
		assumeThat(database()).isIn(TestDatabase.MARIADB, TestDatabase.MYSQL);
		Integer lockMode = this.jdbc.queryForObject("SELECT @@innodb_autoinc_lock_mode", Integer.class);
		// 2: no table-level AUTO-INC lock at all, the case the start-up warning is about
		assumeThat(lockMode).isNotEqualTo(2);
		// the rows that bound the gap the test locks
		this.jdbc.update("INSERT INTO db_lock (lock_key, owner, acquired_at, expires_at) VALUES "
				+ "('gap-0', 'bound', UTC_TIMESTAMP(6), UTC_TIMESTAMP(6) + INTERVAL 1 HOUR), "
				+ "('gap-z', 'bound', UTC_TIMESTAMP(6), UTC_TIMESTAMP(6) + INTERVAL 1 HOUR)");
		// statements that may wait for the test's gate longer than the default statement timeout
		JdbcLockRepository patient = new JdbcLockRepository(this.dataSource, this.dialect, Duration.ofSeconds(60));
		List<Lease> beforeOpen = Collections.synchronizedList(new ArrayList<>());
		List<Lease> afterOpen = Collections.synchronizedList(new ArrayList<>());
		java.util.concurrent.atomic.AtomicBoolean open = new java.util.concurrent.atomic.AtomicBoolean();
		ExecutorService threads = Executors.newFixedThreadPool(2);
		try (Connection gate = this.dataSource.getConnection()) {
			gate.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
			gate.setAutoCommit(false);
			try (Statement statement = gate.createStatement()) {
				// a next-key lock on 'gap-z': the gap ('gap-0', 'gap-z'] takes no insert
				statement.executeQuery("SELECT * FROM db_lock WHERE lock_key > 'gap-0' AND lock_key < 'gap-z' FOR UPDATE")
					.close();
			}
			java.util.function.Function<String, java.util.concurrent.Callable<Object>> acquire = (key) -> () -> {
				Lease lease = patient.tryAcquire(key, "owner-" + key, LONG_LEASE).orElseThrow();
				(open.get() ? afterOpen : beforeOpen).add(lease);
				return lease;
			};
			Future<Object> stalled = threads.submit(acquire.apply("gap-m"));
			// polled more than 100 ms apart: InnoDB refreshes innodb_trx only when it was not read for 100 ms
			await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200)).until(() -> waitingInserts() == 1);
			Future<Object> other = threads.submit(acquire.apply("other-key"));
			// the other key's insert is done, or waits as well
			await().atMost(Duration.ofSeconds(30))
				.pollInterval(Duration.ofMillis(200))
				.until(() -> other.isDone() || waitingInserts() == 2);
			open.set(true);
			gate.rollback();
			stalled.get(1, TimeUnit.MINUTES);
			other.get(1, TimeUnit.MINUTES);
		}
		finally {
			threads.shutdownNow();
		}
		System.out.println(database() + ": inserts done before the gate opened " + beforeOpen.stream()
			.map((hold) -> hold.key() + "=" + hold.token())
			.toList() + ", after " + afterOpen.stream().map((hold) -> hold.key() + "=" + hold.token()).toList());
		long outOfOrder = beforeOpen.stream()
			.mapToLong((early) -> afterOpen.stream().filter((late) -> late.token() < early.token()).count())
			.sum();
		System.out.println(database() + ": tokens drawn before an insert that completed first: " + outOfOrder);
		assertThat(outOfOrder).isZero();
	}

	/** The transactions waiting for a lock in an insert into the lock table. */
	private long waitingInserts() {
		Long count = this.jdbc.queryForObject("SELECT COUNT(*) FROM information_schema.innodb_trx "
				+ "WHERE trx_state = 'LOCK WAIT' AND trx_query LIKE '%INSERT IGNORE INTO db_lock %'", Long.class);
		return (count != null) ? count : 0;
	}

	/** Stalls the inserts of marked owners into a table until opened. */
	private InsertStall stallMarkedInserts(String table) throws Exception {
		if (database() == TestDatabase.POSTGRESQL) {
			return new PostgreSqlInsertStall(table);
		}
		StallingInsertTrigger.arm();
		this.jdbc.execute("DROP TRIGGER IF EXISTS db_lock_test_stall");
		this.jdbc.execute("CREATE TRIGGER db_lock_test_stall BEFORE INSERT ON " + table + " FOR EACH ROW CALL '"
				+ StallingInsertTrigger.class.getName() + "'");
		return new InsertStall() {

			@Override
			public void awaitStalled() throws Exception {
				assertThat(StallingInsertTrigger.stalled.await(30, TimeUnit.SECONDS)).as("stalled").isTrue();
			}

			@Override
			public boolean anotherSessionWaits() {
				Long waiting = jdbc.queryForObject(
						"SELECT COUNT(*) FROM INFORMATION_SCHEMA.SESSIONS WHERE BLOCKER_ID IS NOT NULL", Long.class);
				return waiting != null && waiting > 0;
			}

			@Override
			public void open() {
				StallingInsertTrigger.gate.countDown();
			}

			@Override
			public void close() {
				open();
				jdbc.execute("DROP TRIGGER IF EXISTS db_lock_test_stall");
			}

		};
	}

	/** A stall of marked inserts. */
	private interface InsertStall extends AutoCloseable {

		/** Waits until a marked insert is stalled. */
		void awaitStalled() throws Exception;

		/** Whether another session waits for a lock. */
		boolean anotherSessionWaits();

		/** Lets the stalled insert go on. */
		void open() throws Exception;

	}

	/**
	 * PostgreSQL: a {@code BEFORE INSERT} trigger (it fires after the statement evaluated its
	 * values, before the row's insert) that locks the row of a gate table, which the test
	 * holds locked in an open transaction until it opens the gate.
	 */
	private final class PostgreSqlInsertStall implements InsertStall {

		private final Connection gate;

		private final String table;

		PostgreSqlInsertStall(String table) throws Exception {
			this.table = table;
			jdbc.execute("CREATE TABLE IF NOT EXISTS db_lock_test_gate (id INT PRIMARY KEY)");
			jdbc.execute("INSERT INTO db_lock_test_gate VALUES (1) ON CONFLICT DO NOTHING");
			jdbc.execute("""
					CREATE OR REPLACE FUNCTION db_lock_test_stall() RETURNS trigger LANGUAGE plpgsql AS $$
					BEGIN
					  IF NEW.owner LIKE '%s%%' THEN
					    PERFORM id FROM db_lock_test_gate FOR SHARE;
					  END IF;
					  RETURN NEW;
					END $$""".formatted(StallingInsertTrigger.MARK));
			jdbc.execute("DROP TRIGGER IF EXISTS db_lock_test_stall ON " + table);
			jdbc.execute("CREATE TRIGGER db_lock_test_stall BEFORE INSERT ON " + table + " FOR EACH ROW "
					+ "EXECUTE FUNCTION db_lock_test_stall()");
			this.gate = dataSource.getConnection();
			this.gate.setAutoCommit(false);
			try (Statement statement = this.gate.createStatement()) {
				statement.executeQuery("SELECT id FROM db_lock_test_gate FOR UPDATE").close();
			}
		}

		@Override
		public void awaitStalled() {
			await().atMost(Duration.ofSeconds(30))
				.pollInterval(Duration.ofMillis(10))
				.until(() -> count("SELECT COUNT(*) FROM pg_stat_activity WHERE datname = current_database() "
						+ "AND wait_event_type = 'Lock' AND query LIKE '%INSERT INTO " + this.table + " %'") > 0);
		}

		@Override
		public boolean anotherSessionWaits() {
			return count("SELECT COUNT(*) FROM pg_locks WHERE NOT granted AND locktype = 'advisory' "
					+ "AND database = (SELECT oid FROM pg_database WHERE datname = current_database())") > 0;
		}

		private long count(String sql) {
			Long count = jdbc.queryForObject(sql, Long.class);
			return (count != null) ? count : 0;
		}

		@Override
		public void open() throws Exception {
			if (!this.gate.isClosed()) {
				this.gate.rollback();
				this.gate.close();
			}
		}

		@Override
		public void close() throws Exception {
			open();
			jdbc.execute("DROP TRIGGER IF EXISTS db_lock_test_stall ON " + this.table);
			jdbc.execute("DROP FUNCTION IF EXISTS db_lock_test_stall()");
		}

	}

	@Test
	void eightThreadsOnOneKeyNeverHoldItTogetherAndNoDatabaseErrorEscapes() throws Exception {
		int threads = 8;
		int cyclesPerThread = 60;
		AtomicInteger inside = new AtomicInteger();
		AtomicInteger overlaps = new AtomicInteger();
		ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
		ConcurrentLinkedQueue<Long> tokens = new ConcurrentLinkedQueue<>();
		Concurrently.run(threads, (thread) -> {
			for (int i = 0; i < cyclesPerThread; i++) {
				String owner = "t" + thread + "-" + i;
				try {
					Optional<Lease> lease;
					while ((lease = this.repository.tryAcquire("hot", owner, LONG_LEASE)).isEmpty()) {
						Thread.onSpinWait();
					}
					if (inside.incrementAndGet() > 1) {
						overlaps.incrementAndGet();
					}
					tokens.add(lease.get().token());
					inside.decrementAndGet();
					if (!this.repository.release(lease.get(), Duration.ZERO)) {
						errors.add(new AssertionError("release of " + owner + " found no row"));
					}
				}
				catch (RuntimeException ex) {
					errors.add(ex);
				}
			}
		});
		assertThat(errors).isEmpty();
		assertThat(overlaps).hasValue(0);
		assertThat(tokens).hasSize(threads * cyclesPerThread).doesNotHaveDuplicates();
	}

}
