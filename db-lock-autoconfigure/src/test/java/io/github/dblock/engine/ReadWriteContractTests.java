package io.github.dblock.engine;

import io.github.dblock.LockRequest;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReadWriteLock;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import io.github.dblock.DbLockMode;
import io.github.dblock.support.DbLockTemplate;
import io.github.dblock.LockAcquisitionException;
import io.github.dblock.LockHandle;
import io.github.dblock.LockReleaseException;
import io.github.dblock.LockUpgradeException;
import io.github.dblock.jdbc.JdbcLockRepository;
import io.github.dblock.jdbc.Lease;
import io.github.dblock.jdbc.ReadWriteLockRepository;
import io.github.dblock.jdbc.ReadWriteLockRepository.WriteAttempt;
import io.github.dblock.jdbc.dialect.SqlDialect;
import io.github.dblock.testsupport.Concurrently;
import io.github.dblock.testsupport.RoundTripCountingDataSource;
import io.github.dblock.testsupport.TestDatabase;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.tuple;
import static org.awaitility.Awaitility.await;

/**
 * The contract of the read/write modes on a real database, with real threads. Two engines
 * over one data source play two nodes; overlaps are counted, never assumed.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class ReadWriteContractTests {

	private static final Duration LONG_WAIT = Duration.ofSeconds(60);

	private static final Duration LEASE = Duration.ofSeconds(30);

	private static final Backoff BACKOFF = new Backoff(Duration.ofMillis(2), Duration.ofMillis(50));

	private static final int CYCLES = 20;

	private HikariDataSource dataSource;

	private JdbcTemplate jdbc;

	private JdbcLockRepository leases;

	private LockEngine nodeA;

	private LockEngine nodeB;

	protected abstract TestDatabase database();

	@BeforeAll
	void createDataSource() {
		this.dataSource = database().dataSource(24);
		this.jdbc = new JdbcTemplate(this.dataSource);
		this.leases = new JdbcLockRepository(this.dataSource, database().dialect(this.dataSource));
	}

	@AfterAll
	void closeDataSource() {
		if (this.dataSource != null) {
			this.dataSource.close();
		}
	}

	@BeforeEach
	void createEngines() {
		this.jdbc.update("DELETE FROM " + TestDatabase.TABLE + "_rw");
		this.jdbc.update("DELETE FROM " + TestDatabase.TABLE + "_rw_intents");
		this.nodeA = new LockEngine(this.leases, LockEngineSettings.of(BACKOFF));
		this.nodeB = new LockEngine(this.leases, LockEngineSettings.of(BACKOFF));
	}

	@AfterEach
	void closeEngines() {
		this.nodeA.close();
		this.nodeB.close();
	}

	private static LockRequest request(DbLockMode mode, String key, Duration wait) {
		return new LockRequest(key, wait, LEASE, true, Duration.ZERO, mode);
	}

	@Test
	void threadsWaitingBehindALocalHolderAreListedPerKeyAndMode() throws Exception {
		LockHandle held = this.nodeA.acquire(request(DbLockMode.WRITE, "waited", LONG_WAIT));
		ExecutorService pool = Executors.newFixedThreadPool(2);
		try {
			List<Future<?>> waiters = new ArrayList<>();
			for (int i = 0; i < 2; i++) {
				waiters.add(pool.submit(() -> {
					this.nodeA.acquire(request(DbLockMode.WRITE, "waited", LONG_WAIT)).close();
					return null;
				}));
			}
			await().atMost(Duration.ofSeconds(30))
				.until(() -> this.nodeA.waiting().equals(List.of(new WaitingKey("waited", DbLockMode.WRITE, 2))));
			assertThat(this.nodeA.localWaiters()).isEqualTo(2);
			assertThat(this.nodeB.waiting()).isEmpty();
			held.close();
			for (Future<?> waiter : waiters) {
				waiter.get(1, TimeUnit.MINUTES);
			}
		}
		finally {
			pool.shutdownNow();
		}
		assertThat(this.nodeA.waiting()).isEmpty();
	}

	/**
	 * One thread, no contention, a new key each time: a read cycle is 2 round trips on
	 * PostgreSQL (the reader's insert, sent together with the key's token-order lock, and the
	 * release) and on MariaDB (the insert and its check, sent in sequence, and the release),
	 * as the lease mode's; 3 elsewhere (the insert, its check, the release).
	 */
	@Test
	void anUncontendedReadCycleIsTwoRoundTrips() {
		int expected = (database() == TestDatabase.POSTGRESQL || database() == TestDatabase.MARIADB) ? 2 : 3;
		assertThat(uncontendedRoundTrips(DbLockMode.READ)).isEqualTo(expected * CYCLES);
	}

	/**
	 * One thread, no contention, a new key each time: a write cycle is 2 round trips on
	 * PostgreSQL (the intent's claim and the writer's row, sent together with the key's
	 * token-order lock, and the release) and on MariaDB (the claim and the insert returning
	 * the token, sent in sequence, and the release), as the lease mode's; 4 on MySQL (the
	 * claim, the insert, a read of the token, the release), 6 on H2 (the insert and the
	 * token's draw commit together, and the release is two deletes).
	 */
	@Test
	void anUncontendedWriteCycleIsTwoRoundTrips() {
		int expected = switch (database()) {
			case POSTGRESQL, MARIADB -> 2;
			case MYSQL -> 4;
			default -> 6;
		};
		assertThat(uncontendedRoundTrips(DbLockMode.WRITE)).isEqualTo(expected * CYCLES);
	}

	/** The round trips of {@link #CYCLES} cycles of this mode, one thread, a new key each time. */
	private int uncontendedRoundTrips(DbLockMode mode) {
		RoundTripCountingDataSource counting = new RoundTripCountingDataSource(this.dataSource);
		try (LockEngine engine = new LockEngine(new JdbcLockRepository(counting, database().dialect(this.dataSource)),
				LockEngineSettings.of(BACKOFF))) {
			engine.acquire(request(mode, mode + "-cycle-0", Duration.ZERO)).close();
			int before = counting.roundTrips();
			for (int i = 1; i <= CYCLES; i++) {
				engine.acquire(request(mode, mode + "-cycle-" + i, Duration.ZERO)).close();
			}
			return counting.roundTrips() - before;
		}
	}

	@Test
	void holdersListsReadersAndWritersInKeyOrder() {
		ReadWriteLockRepository repository = this.leases.readWriteLocks().orElseThrow();
		Lease first = repository.tryRead("listed-b", "reader-1", LEASE).orElseThrow();
		Lease second = repository.tryRead("listed-b", "reader-2", LEASE).orElseThrow();
		WriteAttempt writer = repository.tryWrite("listed-a", "writer-1", LEASE, false);
		assertThat(writer.lease()).isNotNull();
		List<ReadWriteLockRepository.HolderRow> holders = repository.holders(10);
		assertThat(holders)
			.extracting((holder) -> holder.row().key(), (holder) -> holder.row().owner(),
					(holder) -> holder.row().token(), ReadWriteLockRepository.HolderRow::writer)
			.containsExactly(tuple("listed-a", "writer-1", writer.lease().token(), true),
					tuple("listed-b", "reader-1", first.token(), false),
					tuple("listed-b", "reader-2", second.token(), false));
		assertThat(holders).allSatisfy((holder) -> assertThat(holder.row().expiresAt())
			.isAfter(holder.row().acquiredAt()));
		assertThat(repository.holders(1)).hasSize(1);
	}

	@Test
	void anIntentHandedOverKeepsNoOwnerThatALateRenewalCouldExtend() {
		ReadWriteLockRepository repository = this.leases.readWriteLocks().orElseThrow();
		String intents = TestDatabase.TABLE + "_rw_intents";
		WriteAttempt first = repository.tryWrite("handed", "writer-1", LEASE, false);
		assertThat(first.lease()).isNotNull();
		assertThat(repository.handOver(first.lease())).isTrue();
		// a renewal of writer-1's intent sent before the hand-over and landing after it: it must find nothing
		int revived = this.jdbc.update("UPDATE " + intents + " SET expires_at = ? WHERE lock_key = ? AND owner = ?",
				java.sql.Timestamp.from(java.time.Instant.now().plusSeconds(3600)), "handed", "writer-1");
		System.out.println("intents of the handing writer that a late renewal extended: " + revived);
		assertThat(revived).isZero();
		// the next writer claims the intent the hand-over left, and a later reader is kept out by it alone
		WriteAttempt next = repository.tryWrite("handed", "writer-2", LEASE, false);
		assertThat(next.lease()).isNotNull();
		assertThat(repository.release(next.lease(), true)).isTrue();
		assertThat(repository.tryRead("handed", "reader-1", LEASE)).isPresent();
	}

	@Test
	void readersOfTwoNodesHoldAKeyTogether() throws Exception {
		int readers = 6;
		CountDownLatch allIn = new CountDownLatch(readers);
		AtomicInteger inside = new AtomicInteger();
		AtomicInteger most = new AtomicInteger();
		List<Long> tokens = java.util.Collections.synchronizedList(new ArrayList<>());
		Concurrently.run(readers, (thread) -> {
			LockEngine node = (thread % 2 == 0) ? this.nodeA : this.nodeB;
			try (LockHandle lock = node.acquire(request(DbLockMode.READ, "shared", LONG_WAIT))) {
				most.accumulateAndGet(inside.incrementAndGet(), Math::max);
				tokens.add(lock.fencingToken());
				allIn.countDown();
				// every reader holds the key until all hold it: only if readers share does this end
				assertThat(allIn.await(LONG_WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
				assertThat(lock.isHeld()).isTrue();
				inside.decrementAndGet();
			}
		});
		assertThat(most.get()).isEqualTo(readers);
		assertThat(tokens).doesNotHaveDuplicates().hasSize(readers);
		assertThat(rows()).isZero();
	}

	@Test
	void aWriterNeverOverlapsAnyoneAndTokensIncrease() throws Exception {
		int threads = 8;
		int rounds = 20;
		AtomicInteger readersIn = new AtomicInteger();
		AtomicInteger writersIn = new AtomicInteger();
		AtomicInteger overlaps = new AtomicInteger();
		AtomicInteger mostReaders = new AtomicInteger();
		AtomicInteger writes = new AtomicInteger();
		AtomicLong releasedToken = new AtomicLong();
		AtomicLong releasedWriteToken = new AtomicLong();
		AtomicInteger stale = new AtomicInteger();
		Concurrently.run(threads, (thread) -> {
			LockEngine node = (thread % 2 == 0) ? this.nodeA : this.nodeB;
			for (int i = 0; i < rounds; i++) {
				boolean write = (thread + i) % 4 == 0;
				try (LockHandle lock = node.acquire(request(write ? DbLockMode.WRITE : DbLockMode.READ, "mixed",
						LONG_WAIT))) {
					// a writer comes after every holder released before it; a reader after every writer
					if (lock.fencingToken() <= (write ? releasedToken.get() : releasedWriteToken.get())) {
						stale.incrementAndGet();
					}
					if (write) {
						if (writersIn.incrementAndGet() != 1 || readersIn.get() != 0) {
							overlaps.incrementAndGet();
						}
						Thread.sleep(1);
						if (readersIn.get() != 0) {
							overlaps.incrementAndGet();
						}
						writersIn.decrementAndGet();
						writes.incrementAndGet();
					}
					else {
						mostReaders.accumulateAndGet(readersIn.incrementAndGet(), Math::max);
						if (writersIn.get() != 0) {
							overlaps.incrementAndGet();
						}
						Thread.sleep(2);
						if (writersIn.get() != 0) {
							overlaps.incrementAndGet();
						}
						readersIn.decrementAndGet();
					}
					releasedToken.accumulateAndGet(lock.fencingToken(), Math::max);
					if (write) {
						releasedWriteToken.accumulateAndGet(lock.fencingToken(), Math::max);
					}
				}
			}
		});
		assertThat(overlaps).hasValue(0);
		assertThat(stale).as("acquisitions whose token was not above every one they came after").hasValue(0);
		assertThat(writes).hasValue(threads * rounds / 4);
		System.out.println(database() + " read/write mix: most readers at once " + mostReaders.get());
		assertThat(rows()).isZero();
	}

	@Test
	void aReaderReadsAgainAndAWriterMayRead() {
		try (LockHandle read = this.nodeA.acquire(request(DbLockMode.READ, "again", LONG_WAIT))) {
			try (LockHandle inner = this.nodeA.acquire(request(DbLockMode.READ, "again", Duration.ZERO))) {
				assertThat(inner.fencingToken()).isEqualTo(read.fencingToken());
			}
			assertThat(read.isHeld()).isTrue();
			assertThat(holderRows("again")).isEqualTo(1);
		}
		try (LockHandle write = this.nodeA.acquire(request(DbLockMode.WRITE, "again", LONG_WAIT))) {
			try (LockHandle read = this.nodeA.acquire(request(DbLockMode.READ, "again", Duration.ZERO))) {
				assertThat(read.fencingToken()).isEqualTo(write.fencingToken());
				assertThat(this.nodeB.tryAcquire(request(DbLockMode.READ, "again", Duration.ZERO))).isEmpty();
			}
			try (LockHandle again = this.nodeA.acquire(request(DbLockMode.WRITE, "again", Duration.ZERO))) {
				assertThat(again.fencingToken()).isEqualTo(write.fencingToken());
			}
			assertThat(write.isHeld()).isTrue();
			assertThat(this.nodeB.tryAcquire(request(DbLockMode.WRITE, "again", Duration.ZERO))).isEmpty();
		}
		Optional<LockHandle> after = this.nodeB.tryAcquire(request(DbLockMode.WRITE, "again", Duration.ZERO));
		assertThat(after).isPresent();
		after.get().close();
		assertThat(rows()).isZero();
	}

	@Test
	void aReaderThatAsksToWriteIsRefusedAtOnce() {
		try (LockHandle read = this.nodeA.acquire(request(DbLockMode.READ, "upgrade", LONG_WAIT))) {
			long start = System.nanoTime();
			assertThatExceptionOfType(LockUpgradeException.class)
				.isThrownBy(() -> this.nodeA.acquire(request(DbLockMode.WRITE, "upgrade", LONG_WAIT)))
				.withMessageContaining("upgrade").satisfies((ex) -> assertThat(ex.getKey()).isEqualTo("upgrade"));
			assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(LONG_WAIT);
			assertThat(read.isHeld()).isTrue();
			// another reader still shares it: the refused writer left no intent behind
			this.nodeB.tryAcquire(request(DbLockMode.READ, "upgrade", Duration.ZERO)).orElseThrow().close();
		}
	}

	@Test
	void aWaitingWriterGetsInUnderAStreamOfReaders() throws Exception {
		int readers = 4;
		AtomicBoolean stop = new AtomicBoolean();
		AtomicInteger readersIn = new AtomicInteger();
		AtomicInteger overlaps = new AtomicInteger();
		AtomicInteger reads = new AtomicInteger();
		AtomicInteger readsAfterWrite = new AtomicInteger();
		AtomicBoolean written = new AtomicBoolean();
		CountDownLatch streaming = new CountDownLatch(readers);
		ExecutorService pool = Executors.newFixedThreadPool(readers + 1);
		try {
			List<Future<?>> stream = new ArrayList<>();
			for (int t = 0; t < readers; t++) {
				LockEngine node = (t % 2 == 0) ? this.nodeA : this.nodeB;
				stream.add(pool.submit(() -> {
					boolean counted = false;
					while (!stop.get()) {
						try (LockHandle lock = node.acquire(request(DbLockMode.READ, "preferred", LONG_WAIT))) {
							readersIn.incrementAndGet();
							if (!counted) {
								counted = true;
								streaming.countDown();
							}
							Thread.sleep(20);
							readersIn.decrementAndGet();
							reads.incrementAndGet();
							if (written.get()) {
								readsAfterWrite.incrementAndGet();
							}
						}
					}
					return null;
				}));
			}
			assertThat(streaming.await(LONG_WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
			int readsBefore = reads.get();
			long start = System.nanoTime();
			Future<Long> writer = pool.submit(() -> {
				try (LockHandle lock = this.nodeB.acquire(request(DbLockMode.WRITE, "preferred", LONG_WAIT))) {
					long waited = System.nanoTime() - start;
					if (readersIn.get() != 0) {
						overlaps.incrementAndGet();
					}
					Thread.sleep(20);
					if (readersIn.get() != 0) {
						overlaps.incrementAndGet();
					}
					written.set(true);
					return waited;
				}
			});
			long waited = writer.get(LONG_WAIT.toSeconds() + 30, TimeUnit.SECONDS);
			while (readsAfterWrite.get() == 0) {
				Thread.sleep(5);
			}
			stop.set(true);
			for (Future<?> reader : stream) {
				reader.get(LONG_WAIT.toSeconds(), TimeUnit.SECONDS);
			}
			System.out.println(database() + " writer waited " + TimeUnit.NANOSECONDS.toMillis(waited)
					+ " ms under a stream of " + readers + " readers (" + readsBefore + " reads before it asked)");
			assertThat(overlaps).hasValue(0);
		}
		finally {
			stop.set(true);
			pool.shutdownNow();
		}
	}

	/**
	 * After a writer's cede, the next local writer holds back; one whose wait ends within the
	 * hold-back does not ask the database, and the writer after it holds back for the rest:
	 * the other node's writer gets the key.
	 */
	@Test
	void aWriterWhoseWaitEndsInTheHoldBackDoesNotTakeBackTheCededKeyNorDoesTheNextOne() throws Exception {
		HoldBackScenario.run(this.leases, this.leases, (wait) -> request(DbLockMode.WRITE, "ceded", wait),
				() -> this.jdbc.queryForObject("SELECT COUNT(*) FROM " + TestDatabase.TABLE
						+ "_rw_intents WHERE lock_key = 'ceded' AND wanted_at IS NOT NULL", Integer.class) == 1);
	}

	@Test
	void aReaderThatStopsRenewingFreesItsShareWhenItsLeaseEnds() throws Exception {
		Duration lease = Duration.ofSeconds(1);
		// a fixed lease, never released: a reader that died without a word
		long start = System.nanoTime();
		LockHandle dead = this.nodeA.acquire(new LockRequest("dead-reader", LONG_WAIT, lease, false, Duration.ZERO,
				DbLockMode.READ));
		try (LockHandle write = this.nodeB.acquire(request(DbLockMode.WRITE, "dead-reader", LONG_WAIT))) {
			// the reader's lease began after start (its insert): the writer cannot come in before start + lease
			// (less the database clock's rounding)
			assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(lease.minusMillis(20));
			assertThat(write.fencingToken()).isGreaterThan(dead.fencingToken());
			assertThat(dead.isHeld()).isFalse();
		}
		dead.close();
		assertThat(dead.lostSince()).isPresent();
	}

	@Test
	void theWatchdogRenewsReadersAndWritersAndFindsThemLost() throws Exception {
		LockEngine renewing = new LockEngine(this.leases,
				new LockEngineSettings(BACKOFF, Duration.ofMillis(100), Duration.ofMillis(50)));
		try {
			LockRequest read = new LockRequest("renewed", LONG_WAIT, Duration.ofMillis(600), true, Duration.ZERO,
					DbLockMode.READ);
			try (LockHandle reader = renewing.acquire(read)) {
				Thread.sleep(1500);
				assertThat(reader.isHeld()).isTrue();
				assertThat(this.nodeB.tryAcquire(request(DbLockMode.WRITE, "renewed", Duration.ZERO))).isEmpty();
				// its row deleted behind its back: the next renewal finds it gone
				this.jdbc.update("DELETE FROM " + TestDatabase.TABLE + "_rw WHERE lock_key = ?", "renewed");
				while (reader.lostSince().isEmpty()) {
					Thread.sleep(10);
				}
				assertThat(reader.isHeld()).isFalse();
			}
			LockRequest write = new LockRequest("renewed", LONG_WAIT, Duration.ofMillis(600), true, Duration.ZERO,
					DbLockMode.WRITE);
			try (LockHandle writer = renewing.acquire(write)) {
				Thread.sleep(1500);
				assertThat(writer.isHeld()).isTrue();
				assertThat(this.nodeB.tryAcquire(request(DbLockMode.READ, "renewed", Duration.ZERO))).isEmpty();
			}
		}
		finally {
			renewing.close();
		}
		assertThat(rows()).isZero();
	}

	@Test
	void theWatchdogRenewsManyHoldersTogetherAndFindsTheOneLost() throws Exception {
		LockEngine renewing = new LockEngine(this.leases,
				new LockEngineSettings(BACKOFF, Duration.ofMillis(100), Duration.ofMillis(50)));
		int readers = 5;
		CountDownLatch allIn = new CountDownLatch(readers + 1);
		CountDownLatch checked = new CountDownLatch(1);
		List<LockHandle> handles = java.util.Collections.synchronizedList(new ArrayList<>());
		ExecutorService pool = Executors.newFixedThreadPool(readers + 1);
		try {
			List<Future<Boolean>> holders = new ArrayList<>();
			for (int t = 0; t <= readers; t++) {
				boolean writer = t == readers;
				holders.add(pool.submit(() -> {
					LockRequest request = new LockRequest(writer ? "batch-written" : "batch-read", LONG_WAIT,
							Duration.ofMillis(600), true, Duration.ZERO, writer ? DbLockMode.WRITE : DbLockMode.READ);
					try (LockHandle handle = renewing.acquire(request)) {
						handles.add(handle);
						allIn.countDown();
						checked.await(LONG_WAIT.toSeconds(), TimeUnit.SECONDS);
						return handle.isHeld();
					}
				}));
			}
			assertThat(allIn.await(LONG_WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
			Thread.sleep(1500);
			assertThat(handles).allSatisfy((handle) -> assertThat(handle.isHeld()).isTrue());
			assertThat(this.nodeB.tryAcquire(request(DbLockMode.WRITE, "batch-read", Duration.ZERO))).isEmpty();
			assertThat(this.nodeB.tryAcquire(request(DbLockMode.READ, "batch-written", Duration.ZERO))).isEmpty();
			// one reader's row deleted behind its back: that one alone is found lost
			LockHandle victim = handles.stream().filter((handle) -> handle.key().equals("batch-read")).findFirst()
				.orElseThrow();
			this.jdbc.update("DELETE FROM " + TestDatabase.TABLE + "_rw WHERE lock_key = ? AND token = ?", "batch-read",
					victim.fencingToken() >> HeldLease.HANDOFF_BITS);
			while (victim.lostSince().isEmpty()) {
				Thread.sleep(10);
			}
			Thread.sleep(300);
			assertThat(handles).filteredOn((handle) -> handle != victim)
				.allSatisfy((handle) -> assertThat(handle.isHeld()).isTrue());
			checked.countDown();
			int held = 0;
			for (Future<Boolean> holder : holders) {
				held += holder.get(LONG_WAIT.toSeconds(), TimeUnit.SECONDS) ? 1 : 0;
			}
			assertThat(held).isEqualTo(readers);
		}
		finally {
			checked.countDown();
			pool.shutdownNow();
			renewing.close();
		}
		assertThat(rows()).isZero();
	}

	@Test
	void theReadWriteLockAdapterSharesAndExcludes() throws Exception {
		DbLockTemplate a = new DbLockTemplate(this.nodeA, "", LONG_WAIT, LEASE);
		DbLockTemplate b = new DbLockTemplate(this.nodeB, "", LONG_WAIT, LEASE);
		ReadWriteLock lockA = a.readWriteLock("adapter");
		ReadWriteLock lockB = b.readWriteLock("adapter");
		lockA.readLock().lock();
		try {
			assertThat(lockB.readLock().tryLock()).isTrue();
			lockB.readLock().unlock();
			assertThat(lockB.writeLock().tryLock()).isFalse();
			assertThatExceptionOfType(LockUpgradeException.class).isThrownBy(() -> lockA.writeLock().tryLock());
		}
		finally {
			lockA.readLock().unlock();
		}
		Lock write = lockA.writeLock();
		assertThat(write.tryLock(LONG_WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
		try {
			lockA.readLock().lock();
			lockA.readLock().unlock();
			assertThat(lockB.readLock().tryLock()).isFalse();
		}
		finally {
			a.readWriteLock("adapter").writeLock().unlock();
		}
		assertThatExceptionOfType(IllegalMonitorStateException.class).isThrownBy(() -> lockA.readLock().unlock());
		assertThat(lockB.writeLock().tryLock()).isTrue();
		lockB.writeLock().unlock();
		assertThat(rows()).isZero();
	}

	/**
	 * What one uncontended cycle (acquire, release) costs on one connection, a new key every
	 * time, with a fixed lease (no renewal): the statements the server received (MariaDB and
	 * MySQL count them per session) and the time, printed beside the lease mode's.
	 */
	@Test
	void anUncontendedCycleCostsFewStatements() throws Exception {
		com.zaxxer.hikari.HikariConfig config = new com.zaxxer.hikari.HikariConfig();
		TestDatabase.Connection settings = database().connection();
		config.setJdbcUrl(settings.url());
		config.setUsername(settings.user());
		config.setPassword(settings.password());
		config.setMaximumPoolSize(1);
		config.setPoolName("rw-cycles");
		try (HikariDataSource single = new HikariDataSource(config);
				LockEngine engine = new LockEngine(new JdbcLockRepository(single, database().dialect(single)),
						LockEngineSettings.of(BACKOFF))) {
			int cycles = 300;
			StringBuilder report = new StringBuilder(database() + " uncontended cycles on one connection:");
			for (DbLockMode mode : List.of(DbLockMode.LEASE, DbLockMode.READ, DbLockMode.WRITE)) {
				AtomicInteger keys = new AtomicInteger();
				Runnable cycle = () -> engine.acquire(new LockRequest("cycle-" + mode + "-" + keys.incrementAndGet(),
						Duration.ZERO, LEASE, false, Duration.ZERO, mode)).close();
				for (int i = 0; i < 50; i++) {
					cycle.run();
				}
				long first = questions(single);
				long before = questions(single);
				long start = System.nanoTime();
				for (int i = 0; i < cycles; i++) {
					cycle.run();
				}
				long micros = TimeUnit.NANOSECONDS.toMicros(System.nanoTime() - start) / cycles;
				// each SHOW STATUS counts itself: subtract what one costs
				long statements = questions(single) - before - (before - first);
				report.append(" ").append(mode).append(" ").append(micros).append(" us");
				if (database().countsQuestions()) {
					report.append(" (").append(String.format(java.util.Locale.ROOT, "%.2f", (double) statements / cycles))
						.append(" statements)");
					// MariaDB counts a compound statement (statements sent in sequence) as one
					if (mode == DbLockMode.READ) {
						// insert, check, delete; the insert and its check in one on MariaDB
						assertThat(statements).isEqualTo(((database() == TestDatabase.MYSQL) ? 3L : 2L) * cycles);
					}
					if (mode == DbLockMode.WRITE) {
						// intent, writer's row (returning its token and end on MariaDB, in one with the intent; read
						// after on MySQL), then the row and the intent in one delete
						assertThat(statements).isEqualTo(((database() == TestDatabase.MYSQL) ? 4L : 2L) * cycles);
					}
				}
				report.append(";");
			}
			System.out.println(report);
		}
	}

	private long questions(HikariDataSource dataSource) throws Exception {
		if (!database().countsQuestions()) {
			return 0;
		}
		try (java.sql.Connection connection = dataSource.getConnection();
				java.sql.Statement statement = connection.createStatement();
				java.sql.ResultSet rs = statement.executeQuery("SHOW SESSION STATUS LIKE 'Questions'")) {
			rs.next();
			return rs.getLong(2);
		}
	}

	private int rows() {
		return this.jdbc.queryForObject("SELECT COUNT(*) FROM " + TestDatabase.TABLE + "_rw", Integer.class)
				+ this.jdbc.queryForObject("SELECT COUNT(*) FROM " + TestDatabase.TABLE + "_rw_intents", Integer.class);
	}

	private int holderRows(String key) {
		return this.jdbc.queryForObject("SELECT COUNT(*) FROM " + TestDatabase.TABLE + "_rw WHERE lock_key = ?",
				Integer.class, key);
	}


	/**
	 * A read or write release whose delete fails is reported to its caller: {@code close()}
	 * throws, naming the instant until which the key stays taken; another node finds it
	 * taken.
	 */
	@Test
	void aReleaseThatFailsIsReportedToItsCaller() {
		int rounds = 5;
		int silentCloses = 0;
		int closesWithoutItsEnd = 0;
		FailingReleases failing = new FailingReleases(this.dataSource, database().dialect(this.dataSource));
		try (LockEngine node = new LockEngine(failing, LockEngineSettings.of(BACKOFF))) {
			for (int i = 0; i < 2 * rounds; i++) {
				DbLockMode mode = (i % 2 == 0) ? DbLockMode.READ : DbLockMode.WRITE;
				String key = "rw-release-fails-" + i;
				LockHandle handle = node.acquire(request(mode, key, Duration.ZERO));
				failing.fail = true;
				try {
					handle.close();
					silentCloses++;
				}
				catch (LockReleaseException ex) {
					if (!ex.getMessage().contains(ex.getTakenUntil().toString())) {
						closesWithoutItsEnd++;
					}
				}
				finally {
					failing.fail = false;
				}
				DbLockMode other = (mode == DbLockMode.READ) ? DbLockMode.WRITE : DbLockMode.READ;
				assertThatExceptionOfType(LockAcquisitionException.class)
					.isThrownBy(() -> this.nodeB.acquire(request(other, key, Duration.ZERO)));
			}
		}
		System.out.println(database() + " read/write: " + (2 * rounds) + " releases that fail (" + failing.failed
				+ " failed): " + silentCloses + " closes returned normally, " + closesWithoutItsEnd
				+ " reports without the lease's end");
		assertThat(silentCloses).isZero();
		assertThat(closesWithoutItsEnd).isZero();
	}

	/** A real repository whose read/write releases fail, when asked, before they reach the database. */
	static final class FailingReleases extends JdbcLockRepository {

		volatile boolean fail;

		final AtomicInteger failed = new AtomicInteger();

		FailingReleases(DataSource dataSource, SqlDialect dialect) {
			super(dataSource, dialect);
		}

		@Override
		public Optional<ReadWriteLockRepository> readWriteLocks() {
			ReadWriteLockRepository delegate = super.readWriteLocks().orElseThrow();
			return Optional.of(new ReadWriteLockRepository() {

				@Override
				public Optional<Lease> tryRead(String key, String owner, Duration lease) {
					return delegate.tryRead(key, owner, lease);
				}

				@Override
				public WriteAttempt tryWrite(String key, String owner, Duration lease, boolean again) {
					return delegate.tryWrite(key, owner, lease, again);
				}

				@Override
				public int withdraw(String key, String owner) {
					return delegate.withdraw(key, owner);
				}

				@Override
				public boolean release(Lease lease, boolean writer) {
					if (FailingReleases.this.fail) {
						FailingReleases.this.failed.incrementAndGet();
						throw new DataAccessResourceFailureException("Test fault: the release of " + lease + " failed");
					}
					return delegate.release(lease, writer);
				}

				@Override
				public boolean handOver(Lease lease) {
					if (FailingReleases.this.fail) {
						FailingReleases.this.failed.incrementAndGet();
						throw new DataAccessResourceFailureException("Test fault: the hand-over of " + lease + " failed");
					}
					return delegate.handOver(lease);
				}

				@Override
				public boolean cede(Lease lease, Duration wantedWithin) {
					return delegate.cede(lease, wantedWithin);
				}

				@Override
				public Optional<Instant> renew(Lease lease, Duration duration, boolean writer) {
					return delegate.renew(lease, duration, writer);
				}

				@Override
				public List<Optional<Instant>> renewAll(List<Lease> leases, Duration duration, Set<String> writers) {
					return delegate.renewAll(leases, duration, writers);
				}

				@Override
				public @Nullable String unavailable() {
					return delegate.unavailable();
				}

				@Override
				public int deleteExpired(int limit) {
					return delegate.deleteExpired(limit);
				}

			});
		}

	}

}
