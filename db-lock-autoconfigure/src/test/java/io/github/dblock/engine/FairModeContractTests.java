package io.github.dblock.engine;

import io.github.dblock.LockRequest;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import io.github.dblock.DbLockException;
import io.github.dblock.DbLockMode;
import io.github.dblock.LockAcquisitionException;
import io.github.dblock.LockHandle;
import io.github.dblock.LockReleaseException;
import io.github.dblock.jdbc.FairLockRepository;
import io.github.dblock.jdbc.FairLockRepository.Enqueued;
import io.github.dblock.jdbc.JdbcLockRepository;
import io.github.dblock.jdbc.dialect.SqlDialect;
import io.github.dblock.testsupport.CancelNotSent;
import io.github.dblock.testsupport.Concurrently;
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
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assumptions.assumeThat;

/**
 * The contract of the fair mode on a real database, with real threads. Two engines over one
 * data source play two JVMs; arrivals are staggered by waiting until the previous one's
 * ticket is visible in the queue table, so that the order of arrival is known.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class FairModeContractTests {

	private static final Duration LONG_WAIT = Duration.ofSeconds(60);

	private static final Duration LEASE = Duration.ofSeconds(30);

	private static final Backoff BACKOFF = new Backoff(Duration.ofMillis(2), Duration.ofMillis(50));

	private static final String QUEUE = TestDatabase.TABLE + "_fair_queue";

	private HikariDataSource dataSource;

	private JdbcTemplate jdbc;

	private CountingRepository leases;

	private LockEngine nodeA;

	private LockEngine nodeB;

	protected abstract TestDatabase database();

	@BeforeAll
	void createDataSource() {
		this.dataSource = database().dataSource(24);
		this.jdbc = new JdbcTemplate(this.dataSource);
		this.leases = new CountingRepository(this.dataSource, database().dialect(this.dataSource));
	}

	@AfterAll
	void closeDataSource() {
		if (this.dataSource != null) {
			this.dataSource.close();
		}
	}

	@BeforeEach
	void createEngines() {
		this.jdbc.update("DELETE FROM " + QUEUE);
		this.nodeA = new LockEngine(this.leases, LockEngineSettings.of(BACKOFF));
		this.nodeB = new LockEngine(this.leases, LockEngineSettings.of(BACKOFF));
	}

	@AfterEach
	void closeEngines() {
		this.nodeA.close();
		this.nodeB.close();
	}

	private static LockRequest request(String key, Duration wait) {
		return new LockRequest(key, wait, LEASE, true, Duration.ZERO, DbLockMode.FAIR);
	}

	private int queued(String key) {
		return this.jdbc.queryForObject("SELECT COUNT(*) FROM " + QUEUE + " WHERE lock_key = ?", Integer.class, key);
	}

	/** Polls the queue table until it holds {@code count} tickets of the key. */
	private void awaitQueued(String key, int count) {
		long deadline = System.nanoTime() + LONG_WAIT.toNanos();
		while (queued(key) != count) {
			assertThat(System.nanoTime() - deadline).as("tickets of '" + key + "' never came to " + count).isNegative();
			LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
		}
	}

	@Test
	void threadsWaitingBehindALocalHolderAreListedPerKeyAndMode() throws Exception {
		LockHandle held = this.nodeA.acquire(request("waited", LONG_WAIT));
		ExecutorService pool = Executors.newFixedThreadPool(2);
		try {
			List<Future<?>> waiters = new ArrayList<>();
			for (int i = 0; i < 2; i++) {
				waiters.add(pool.submit(() -> {
					this.nodeA.acquire(request("waited", LONG_WAIT)).close();
					return null;
				}));
			}
			await().atMost(Duration.ofSeconds(30))
				.until(() -> this.nodeA.waiting().equals(List.of(new WaitingKey("waited", DbLockMode.FAIR, 2))));
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

	@Test
	void holdersListsTheHeadOfEachKeysQueue() {
		FairLockRepository queue = this.leases.fairQueue().orElseThrow();
		FairLockRepository.Ticket first = queue.enqueue("listed-b", "owner-1", LEASE);
		FairLockRepository.Ticket second = queue.enqueue("listed-b", "owner-2", LEASE);
		FairLockRepository.Ticket other = queue.enqueue("listed-a", "owner-3", LEASE);
		assertThat(queue.holders(10)).extracting(FairLockRepository.HeldTicket::ticket).containsExactly(other, first);
		assertThat(queue.holders(10)).allSatisfy((held) -> assertThat(held.expiresAt()).isAfter(Instant.EPOCH));
		assertThat(queue.leave(first)).isTrue();
		assertThat(queue.holders(10)).extracting(FairLockRepository.HeldTicket::ticket).containsExactly(other, second);
		assertThat(queue.holders(1)).hasSize(1);
	}

	@Test
	void aLocalWaiterWhoseTicketIsNextTakesTheKeyWithoutAskingForItsTurn() throws Exception {
		LockHandle held = this.nodeA.acquire(request("handed-on", Duration.ZERO));
		ExecutorService pool = Executors.newSingleThreadExecutor();
		try {
			Future<LockHandle> next = pool.submit(() -> this.nodeA.acquire(request("handed-on", LONG_WAIT)));
			awaitLocalWaiter(this.nodeA, "handed-on");
			long nextTicket = this.jdbc.queryForObject("SELECT MAX(ticket) FROM " + QUEUE + " WHERE lock_key = ?",
					Long.class, "handed-on");
			held.close();
			try (LockHandle taken = next.get(1, TimeUnit.MINUTES)) {
				assertThat(taken.isHeld()).isTrue();
				assertThat(taken.fencingToken()).isEqualTo(nextTicket);
				// handed on by the release, which read that no ticket came between them
				assertThat(this.leases.asked).doesNotContain(nextTicket);
				assertThat(queued("handed-on")).isOne();
			}
		}
		finally {
			pool.shutdownNow();
		}
	}

	@Test
	void aLocalWaiterBehindAnotherEnginesTicketIsNotHandedTheKey() throws Exception {
		String key = "not-handed-on";
		LockHandle held = this.nodeA.acquire(request(key, Duration.ZERO));
		ExecutorService pool = Executors.newFixedThreadPool(2);
		try {
			Future<LockHandle> remote = pool.submit(() -> this.nodeB.acquire(request(key, LONG_WAIT)));
			awaitQueued(key, 2);
			Future<LockHandle> local = pool.submit(() -> this.nodeA.acquire(request(key, LONG_WAIT)));
			awaitLocalWaiter(this.nodeA, key);
			awaitQueued(key, 3);
			held.close();
			try (LockHandle first = remote.get(1, TimeUnit.MINUTES)) {
				assertThat(first.isHeld()).isTrue();
				// handed on at the release, it would have held before the other engine's waiter asked
				assertThat(local).isNotDone();
			}
			try (LockHandle second = local.get(1, TimeUnit.MINUTES)) {
				assertThat(second.isHeld()).isTrue();
			}
		}
		finally {
			pool.shutdownNow();
		}
	}

	@Test
	void aHolderWhoseTicketWasDeletedBehindItsBackIsLostNotHandedOnAtItsRelease() throws Exception {
		String key = "deleted-behind";
		List<String> ended = Collections.synchronizedList(new ArrayList<>());
		LockListener listener = new LockListener() {
			@Override
			public void holdEnded(String key, DbLockMode mode, String owner, boolean lost) {
				ended.add(owner + (lost ? ":lost" : ":released"));
			}
		};
		this.nodeA.addListener(listener);
		LockHandle held = this.nodeA.acquire(request(key, Duration.ZERO));
		String owner = this.jdbc.queryForObject("SELECT owner FROM " + QUEUE + " WHERE lock_key = ?", String.class, key);
		ExecutorService pool = Executors.newSingleThreadExecutor();
		try {
			Future<LockHandle> next = pool.submit(() -> this.nodeA.acquire(request(key, LONG_WAIT)));
			awaitLocalWaiter(this.nodeA, key);
			this.jdbc.update("DELETE FROM " + QUEUE + " WHERE owner = ?", owner);
			held.close();
			try (LockHandle taken = next.get(1, TimeUnit.MINUTES)) {
				assertThat(taken.isHeld()).isTrue();
			}
			assertThat(ended).startsWith(owner + ":lost");
		}
		finally {
			pool.shutdownNow();
			this.nodeA.removeListener(listener);
		}
	}

	@Test
	void aLocalWaiterWhoseTicketEndedByTheDatabasesClockIsNotHandedTheKey() throws Exception {
		String key = "ended-next";
		LockHandle held = this.nodeA.acquire(request(key, Duration.ZERO));
		ExecutorService pool = Executors.newSingleThreadExecutor();
		try {
			Future<LockHandle> next = pool.submit(() -> this.nodeA.acquire(request(key, LONG_WAIT)));
			awaitLocalWaiter(this.nodeA, key);
			long ended = this.jdbc.queryForObject("SELECT MAX(ticket) FROM " + QUEUE + " WHERE lock_key = ?", Long.class,
					key);
			// valid on the local clock, ended on the database's
			this.jdbc.update("UPDATE " + QUEUE + " SET expires_at = ? WHERE ticket = ?",
					java.sql.Timestamp.from(Instant.now().minus(Duration.ofDays(1))), ended);
			held.close();
			try (LockHandle taken = next.get(1, TimeUnit.MINUTES)) {
				assertThat(taken.isHeld()).isTrue();
				// it found its ticket ended and enqueued again
				assertThat(taken.fencingToken()).isGreaterThan(ended);
			}
		}
		finally {
			pool.shutdownNow();
		}
	}

	/** Waits until one thread of the engine waits for the key. */
	private static void awaitLocalWaiter(LockEngine engine, String key) {
		await().atMost(Duration.ofSeconds(30))
			.until(() -> engine.waiting().equals(List.of(new WaitingKey(key, DbLockMode.FAIR, 1))));
	}

	@Test
	void waitersOfTwoEnginesAndManyThreadsAreServedInArrivalOrder() throws Exception {
		String key = "fair-order";
		int waiters = 10;
		LockHandle first = this.nodeA.acquire(request(key, Duration.ZERO));
		List<Integer> served = Collections.synchronizedList(new ArrayList<>());
		List<Long> tokens = Collections.synchronizedList(new ArrayList<>());
		AtomicInteger holders = new AtomicInteger();
		AtomicInteger overlaps = new AtomicInteger();
		ExecutorService threads = Executors.newFixedThreadPool(waiters);
		try {
			List<Future<?>> calls = new ArrayList<>();
			for (int i = 0; i < waiters; i++) {
				int arrival = i;
				// two, three and five threads in a row on one engine: local and remote neighbours alike
				LockEngine node = (i % 5 < 2) ? this.nodeA : this.nodeB;
				calls.add(threads.submit(() -> {
					try (LockHandle lock = node.acquire(request(key, LONG_WAIT))) {
						if (holders.incrementAndGet() > 1) {
							overlaps.incrementAndGet();
						}
						served.add(arrival);
						tokens.add(lock.fencingToken());
						holders.decrementAndGet();
					}
					return null;
				}));
				awaitQueued(key, arrival + 2);
			}
			first.close();
			for (Future<?> call : calls) {
				call.get(2, TimeUnit.MINUTES);
			}
		}
		finally {
			threads.shutdownNow();
		}
		assertThat(overlaps).hasValue(0);
		List<Integer> arrivals = new ArrayList<>();
		for (int i = 0; i < waiters; i++) {
			arrivals.add(i);
		}
		assertThat(served).isEqualTo(arrivals);
		assertThat(tokens).isSortedAccordingTo(Long::compare).doesNotHaveDuplicates();
		assertThat(tokens.get(0)).isGreaterThan(first.fencingToken());
		assertThat(queued(key)).isZero();
	}

	@Test
	void threadsOfTwoEnginesNeverHoldTogetherAndTokensIncrease() throws Exception {
		String key = "fair-exclusive";
		int threads = 8;
		int rounds = 15;
		AtomicInteger holders = new AtomicInteger();
		AtomicInteger overlaps = new AtomicInteger();
		AtomicLong lastToken = new AtomicLong();
		AtomicInteger decreasing = new AtomicInteger();
		AtomicInteger count = new AtomicInteger();
		Concurrently.run(threads, (thread) -> {
			LockEngine node = (thread % 2 == 0) ? this.nodeA : this.nodeB;
			for (int i = 0; i < rounds; i++) {
				try (LockHandle lock = node.acquire(request(key, LONG_WAIT))) {
					if (holders.incrementAndGet() > 1) {
						overlaps.incrementAndGet();
					}
					if (lock.fencingToken() <= lastToken.getAndSet(lock.fencingToken())) {
						decreasing.incrementAndGet();
					}
					count.incrementAndGet();
					assertThat(lock.isHeld()).isTrue();
					holders.decrementAndGet();
				}
			}
		});
		assertThat(overlaps).hasValue(0);
		assertThat(decreasing).hasValue(0);
		assertThat(count).hasValue(threads * rounds);
		assertThat(queued(key)).isZero();
	}

	/**
	 * Threads of two engines with short, random waits, many of which run out (and some
	 * interrupts): never two holders, tokens increasing, and no ticket left behind.
	 */
	@Test
	void waitersThatGiveUpNeverLetTwoInNorLeaveTicketsBehind() throws Exception {
		String key = "fair-give-ups";
		int threads = 8;
		int rounds = 25;
		AtomicInteger holders = new AtomicInteger();
		AtomicInteger overlaps = new AtomicInteger();
		AtomicInteger acquired = new AtomicInteger();
		AtomicInteger gaveUp = new AtomicInteger();
		AtomicLong lastToken = new AtomicLong();
		AtomicInteger decreasing = new AtomicInteger();
		Concurrently.run(threads, (thread) -> {
			LockEngine node = (thread % 2 == 0) ? this.nodeA : this.nodeB;
			java.util.Random random = new java.util.Random(thread);
			for (int i = 0; i < rounds; i++) {
				try (LockHandle lock = node.acquire(request(key, Duration.ofMillis(random.nextInt(20))))) {
					if (holders.incrementAndGet() > 1) {
						overlaps.incrementAndGet();
					}
					if (lock.fencingToken() <= lastToken.getAndSet(lock.fencingToken())) {
						decreasing.incrementAndGet();
					}
					acquired.incrementAndGet();
					LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(random.nextInt(3)));
					holders.decrementAndGet();
				}
				catch (LockAcquisitionException ex) {
					gaveUp.incrementAndGet();
				}
			}
		});
		System.out.println(database() + " fair with random short waits: " + acquired + " acquired, " + gaveUp
				+ " gave up");
		assertThat(overlaps).hasValue(0);
		assertThat(decreasing).hasValue(0);
		assertThat(acquired.get() + gaveUp.get()).isEqualTo(threads * rounds);
		assertThat(queued(key)).isZero();
	}

	@Test
	void aWaiterWhoseWaitRunsOutLeavesTheQueueAtOnce() {
		String key = "fair-give-up";
		try (LockHandle held = this.nodeA.acquire(request(key, Duration.ZERO))) {
			assertThatExceptionOfType(LockAcquisitionException.class)
				.isThrownBy(() -> this.nodeB.acquire(request(key, Duration.ofMillis(200))));
			// its ticket was deleted before it returned
			assertThat(queued(key)).isOne();
			assertThat(this.nodeB.tryAcquire(request(key, Duration.ZERO))).isEmpty();
			assertThat(queued(key)).isOne();
			assertThat(held.isHeld()).isTrue();
		}
		assertThat(queued(key)).isZero();
		Optional<LockHandle> next = this.nodeB.tryAcquire(request(key, Duration.ZERO));
		assertThat(next).isPresent();
		next.get().close();
	}

	@Test
	void anInterruptedWaiterLeavesTheQueueAtOnce() throws Exception {
		String key = "fair-interrupt";
		try (LockHandle held = this.nodeA.acquire(request(key, Duration.ZERO))) {
			AtomicBoolean interrupted = new AtomicBoolean();
			CompletableFuture<Throwable> waiter = new CompletableFuture<>();
			Thread thread = new Thread(() -> {
				try {
					this.nodeB.acquire(request(key, LONG_WAIT)).close();
					waiter.complete(null);
				}
				catch (Throwable ex) {
					interrupted.set(Thread.currentThread().isInterrupted());
					waiter.complete(ex);
				}
			});
			thread.start();
			awaitQueued(key, 2);
			thread.interrupt();
			Throwable failure = waiter.get(1, TimeUnit.MINUTES);
			assertThat(failure).isInstanceOf(DbLockException.class).hasCauseInstanceOf(InterruptedException.class);
			assertThat(interrupted).isTrue();
			assertThat(queued(key)).isOne();
			assertThat(held.isHeld()).isTrue();
		}
	}

	@Test
	void aLocalWaiterThatGivesUpLetsTheNextLocalWaiterAsk() throws Exception {
		String key = "fair-local-give-up";
		LockHandle held = this.nodeA.acquire(request(key, Duration.ZERO));
		CountDownLatch gaveUp = new CountDownLatch(1);
		CompletableFuture<Long> second = new CompletableFuture<>();
		Thread impatient = new Thread(() -> {
			try {
				this.nodeB.acquire(request(key, Duration.ofMillis(300)));
			}
			catch (LockAcquisitionException ex) {
				gaveUp.countDown();
			}
		});
		impatient.start();
		awaitQueued(key, 2);
		Thread patient = new Thread(() -> {
			try {
				long token;
				try (LockHandle lock = this.nodeB.acquire(request(key, LONG_WAIT))) {
					token = lock.fencingToken();
				}
				second.complete(token);
			}
			catch (Throwable ex) {
				second.completeExceptionally(ex);
			}
		});
		patient.start();
		awaitQueued(key, 3);
		assertThat(gaveUp.await(1, TimeUnit.MINUTES)).isTrue();
		held.close();
		assertThat(second.get(1, TimeUnit.MINUTES)).isGreaterThan(held.fencingToken());
	}

	@Test
	void aDeadWaitersTicketLeavesTheQueueWhenItsLeaseEnds() throws Exception {
		String key = "fair-dead-waiter";
		FairLockRepository queue = this.leases.fairQueue().orElseThrow();
		// a waiter of a JVM that died: its ticket is never renewed
		FairLockRepository.Ticket dead = queue.enqueue(key, "dead-jvm", Duration.ofSeconds(1));
		long start = System.nanoTime();
		try (LockHandle lock = this.nodeA.acquire(request(key, LONG_WAIT))) {
			long waitedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
			System.out.println(database() + " fair: a dead waiter's ticket (lease 1 s) let the next in after "
					+ waitedMillis + " ms");
			assertThat(lock.fencingToken()).isGreaterThan(dead.number());
			assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(500));
		}
		// the next ticket deleted the dead one before it went past it: nothing left for the reaper
		assertThat(queue.deleteExpired(10)).isZero();
		assertThat(queued(key)).isZero();
	}

	@Test
	void aThreadThatHoldsAKeyTakesItAgainWithNoStatement() {
		String key = "fair-reentry";
		try (LockHandle outer = this.nodeA.acquire(request(key, Duration.ZERO))) {
			int statements = this.leases.statements.get();
			try (LockHandle inner = this.nodeA.acquire(request(key, Duration.ZERO))) {
				assertThat(inner.fencingToken()).isEqualTo(outer.fencingToken());
				assertThat(this.leases.statements).hasValue(statements);
			}
			assertThat(outer.isHeld()).isTrue();
			assertThat(queued(key)).isOne();
		}
		assertThat(queued(key)).isZero();
	}

	/**
	 * A ticket whose last handle is closed inside a transaction stays held until the
	 * transaction completes (what was written under it commits first), by commit or by
	 * rollback; its thread takes it again meanwhile with no new ticket.
	 */
	@Test
	void aTicketReleasedInsideATransactionIsHeldUntilItCompletes() {
		String key = "fair-in-transaction";
		TransactionTemplate transaction = new TransactionTemplate(new DataSourceTransactionManager(this.dataSource));
		for (boolean rollback : new boolean[] { false, true }) {
			transaction.executeWithoutResult((status) -> {
				long token;
				try (LockHandle handle = this.nodeA.acquire(request(key, Duration.ZERO))) {
					token = handle.fencingToken();
				}
				assertThat(queued(key)).as("still queued").isOne();
				assertThat(this.nodeB.tryAcquire(request(key, Duration.ZERO))).isEmpty();
				try (LockHandle again = this.nodeA.acquire(request(key, Duration.ZERO))) {
					assertThat(again.fencingToken()).isEqualTo(token);
				}
				assertThat(queued(key)).isOne();
				if (rollback) {
					status.setRollbackOnly();
				}
			});
			assertThat(queued(key)).as("released when the transaction completed").isZero();
			this.nodeB.tryAcquire(request(key, Duration.ZERO)).orElseThrow().close();
		}
	}

	/**
	 * A thread that takes its fair key again follows the lease mode's rule: a fixed lease
	 * shorter than the new request's is extended, a renewed lease asked for inside a fixed one
	 * is refused, and one whose lease has ended (here while its release waited for the
	 * transaction) is ended and the key taken afresh, with a larger ticket.
	 */
	@Test
	void aThreadTakingItsFairKeyAgainFollowsTheLeaseModesRule() {
		String key = "fair-again";
		TransactionTemplate transaction = new TransactionTemplate(new DataSourceTransactionManager(this.dataSource));
		transaction.executeWithoutResult((status) -> {
			LockHandle first = this.nodeA.acquire(new LockRequest(key, Duration.ZERO, Duration.ofSeconds(2), false,
					Duration.ZERO, DbLockMode.FAIR));
			long token = first.fencingToken();
			first.close();
			try (LockHandle longer = this.nodeA.acquire(new LockRequest(key, Duration.ZERO, Duration.ofSeconds(30), false,
					Duration.ZERO, DbLockMode.FAIR))) {
				assertThat(longer.fencingToken()).isEqualTo(token);
				assertThat(longer.expiresAt()).isAfter(java.time.Instant.now().plusSeconds(20));
				assertThatExceptionOfType(DbLockException.class)
					.isThrownBy(() -> this.nodeA.acquire(request(key, Duration.ZERO)))
					.withMessageContaining("renewed");
			}
		});
		assertThat(queued(key)).isZero();
		transaction.executeWithoutResult((status) -> {
			LockHandle first = this.nodeA.acquire(new LockRequest(key, Duration.ZERO, Duration.ofMillis(300), false,
					Duration.ZERO, DbLockMode.FAIR));
			long token = first.fencingToken();
			first.close();
			// its fixed lease ends while its release waits for the transaction
			await().atMost(LONG_WAIT).until(() -> first.expiresAt().isBefore(java.time.Instant.now()));
			try (LockHandle fresh = this.nodeA.acquire(new LockRequest(key, Duration.ZERO, Duration.ofSeconds(30), false,
					Duration.ZERO, DbLockMode.FAIR))) {
				assertThat(fresh.fencingToken()).isGreaterThan(token);
			}
		});
		assertThat(queued(key)).isZero();
	}

	@Test
	void aFixedLeaseEndsOnTimeAndIsThenNotHeld() {
		String key = "fair-fixed";
		LockHandle lock = this.nodeA
			.acquire(new LockRequest(key, Duration.ZERO, Duration.ofMillis(300), false, Duration.ZERO, DbLockMode.FAIR));
		assertThat(lock.isHeld()).isTrue();
		long deadline = System.nanoTime() + LONG_WAIT.toNanos();
		while (lock.isHeld() && System.nanoTime() - deadline < 0) {
			LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
		}
		assertThat(lock.isHeld()).isFalse();
		assertThat(lock.lostSince()).isPresent();
		// another owner gets the key after the lease, by the database's clock
		try (LockHandle next = this.nodeB.acquire(request(key, LONG_WAIT))) {
			assertThat(next.fencingToken()).isGreaterThan(lock.fencingToken());
		}
		lock.close();
		// still reported after the release, as the lease mode does
		assertThat(lock.lostSince()).isPresent();
	}

	/**
	 * The order of a key's tickets is the order in which they become visible: an enqueue
	 * waits while another transaction holds the key's row, and draws its number only then,
	 * after every number drawn meanwhile. (Else a ticket numbered before the head, committed
	 * after it, would let a second owner in.)
	 */
	@Test
	void aTicketIsNumberedAfterTheTicketsThatCommittedBeforeIt() throws Exception {
		String key = "fair-numbered-in-commit-order";
		// a statement timeout long enough for the test's steps while the enqueue waits
		FairLockRepository queue = new JdbcLockRepository(this.dataSource, database().dialect(this.dataSource),
				LONG_WAIT)
			.fairQueue()
			.orElseThrow();
		queue.leave(queue.enqueue(key, "creates-the-key-row", LEASE));
		ExecutorService enqueuer = Executors.newSingleThreadExecutor();
		try (java.sql.Connection transaction = this.dataSource.getConnection()) {
			transaction.setAutoCommit(false);
			try (java.sql.PreparedStatement lock = transaction
				.prepareStatement("SELECT lock_key FROM " + TestDatabase.TABLE + "_fair_keys WHERE lock_key = ? FOR UPDATE")) {
				lock.setString(1, key);
				lock.executeQuery().close();
			}
			Future<FairLockRepository.Ticket> late = enqueuer.submit(() -> queue.enqueue(key, "late", LEASE));
			awaitLockWait(late);
			long drawnMeanwhile;
			try (java.sql.Statement draw = transaction.createStatement()) {
				drawnMeanwhile = switch (database()) {
					case MARIADB, MYSQL -> {
						draw.executeUpdate("INSERT INTO " + QUEUE + " (lock_key, owner, expires_at) VALUES ('"
								+ key + "-other', 'meanwhile', UTC_TIMESTAMP(6))", java.sql.Statement.RETURN_GENERATED_KEYS);
						try (java.sql.ResultSet keys = draw.getGeneratedKeys()) {
							keys.next();
							yield keys.getLong(1);
						}
					}
					case POSTGRESQL -> scalar(draw, "SELECT nextval('" + TestDatabase.TABLE + "_token_seq')");
					default -> scalar(draw, "SELECT NEXT VALUE FOR " + TestDatabase.TABLE + "_token_seq");
				};
			}
			assertThat(late).isNotDone();
			transaction.commit();
			assertThat(late.get(1, TimeUnit.MINUTES).number()).isGreaterThan(drawnMeanwhile);
		}
		finally {
			enqueuer.shutdownNow();
			this.jdbc.update("DELETE FROM " + QUEUE + " WHERE lock_key LIKE ?", key + "%");
		}
	}

	private static long scalar(java.sql.Statement statement, String sql) throws java.sql.SQLException {
		try (java.sql.ResultSet rs = statement.executeQuery(sql)) {
			rs.next();
			return rs.getLong(1);
		}
	}

	/** Polls the server until a session waits for a row lock: the enqueue. */
	private void awaitLockWait(Future<?> enqueue) throws Exception {
		String sql = switch (database()) {
			case POSTGRESQL -> "SELECT COUNT(*) FROM pg_stat_activity WHERE datname = current_database() "
					+ "AND wait_event_type = 'Lock'";
			// the enqueue running in this database (it can only be waiting for the row); the driver may put
			// SET STATEMENT max_statement_time=n FOR in front of it
			case MARIADB, MYSQL -> "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID <> CONNECTION_ID() AND DB = DATABASE() "
					+ "AND COMMAND = 'Query' AND INFO LIKE '%INSERT INTO " + QUEUE + " %'";
			default -> "SELECT COUNT(*) FROM INFORMATION_SCHEMA.SESSIONS WHERE BLOCKER_ID IS NOT NULL";
		};
		long deadline = System.nanoTime() + LONG_WAIT.toNanos();
		while (this.jdbc.queryForObject(sql, Integer.class) == 0) {
			if (enqueue.isDone()) {
				enqueue.get();
				throw new AssertionError("the enqueue did not wait for the key's row");
			}
			assertThat(System.nanoTime() - deadline).as("no session waited for the key's row").isNegative();
			LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
		}
	}

	/**
	 * One thread, no contention: a fair cycle is three statements once the key's row exists
	 * (enqueue, the look at the head, the delete), against the lease mode's two; on
	 * PostgreSQL two round trips, the enqueue and the look going together. The times
	 * are printed, with the statements that reach a MariaDB or MySQL server per cycle (its
	 * {@code Questions}, on a pool of one connection).
	 */
	@Test
	void aFairCycleIsThreeStatementsOnceTheKeyIsKnown() {
		String key = "fair-cycle";
		int cycles = 300;
		this.nodeA.acquire(request(key, Duration.ZERO)).close();
		int before = this.leases.statements.get();
		long fairNanos = cycles(this.nodeA, request(key, Duration.ofSeconds(5)), cycles);
		int statements = this.leases.statements.get() - before;
		long leaseNanos = cycles(this.nodeA, new LockRequest(key, Duration.ofSeconds(5), LEASE, true, Duration.ZERO),
				cycles);
		String questions = "";
		if (database().countsQuestions()) {
			try (HikariDataSource one = database().dataSource(1);
					LockEngine engine = new LockEngine(new JdbcLockRepository(one, database().dialect(one)),
							LockEngineSettings.of(BACKOFF))) {
				JdbcTemplate session = new JdbcTemplate(one);
				engine.acquire(request(key, Duration.ZERO)).close();
				long q0 = questions(session);
				cycles(engine, request(key, Duration.ofSeconds(5)), cycles);
				long q1 = questions(session);
				cycles(engine, new LockRequest(key, Duration.ofSeconds(5), LEASE, true, Duration.ZERO), cycles);
				long q2 = questions(session);
				questions = String.format("; server statements per cycle: fair %.2f, lease %.2f",
						(q1 - q0 - 1) / (double) cycles, (q2 - q1 - 1) / (double) cycles);
			}
		}
		System.out.println(String.format("%s cycle, one thread, one key: fair %.3f ms, lease %.3f ms%s", database(),
				fairNanos / 1e6 / cycles, leaseNanos / 1e6 / cycles, questions));
		assertThat(statements).isEqualTo(roundTrips() * cycles);
	}

	/**
	 * The round trips of an uncontended fair cycle: the enqueue and look go together on
	 * PostgreSQL and MariaDB.
	 */
	private int roundTrips() {
		return (database() == TestDatabase.POSTGRESQL || database() == TestDatabase.MARIADB) ? 2 : 3;
	}

	/**
	 * A fixed lease taken at the first look after the enqueue counts from the enqueue, as
	 * the lease mode's counts from its insert: no extension, as many round trips as a
	 * renewed lease's.
	 */
	@Test
	void aFixedLeaseTakenAtOnceIsNotExtended() {
		String key = "fair-cycle-fixed";
		int cycles = 50;
		LockRequest fixed = new LockRequest(key, Duration.ofSeconds(5), LEASE, false, Duration.ZERO, DbLockMode.FAIR);
		this.nodeA.acquire(fixed).close();
		int before = this.leases.statements.get();
		cycles(this.nodeA, fixed, cycles);
		assertThat(this.leases.statements.get() - before).isEqualTo(roundTrips() * cycles);
		// and with no wait (a tryLock)
		before = this.leases.statements.get();
		cycles(this.nodeA, fixed.withWait(Duration.ZERO), cycles);
		assertThat(this.leases.statements.get() - before).isEqualTo(roundTrips() * cycles);
	}

	/**
	 * A fixed lease counts from the acquisition: a waiter that paused, handed the key by a
	 * thread of its JVM or taking it at a look after another engine's release, has its
	 * ticket's lease extended to its whole length from then (the database's expiry moves).
	 */
	@Test
	void aFixedLeaseOfAWaiterCountsFromItsHold() throws Exception {
		String key = "fair-fixed-from-hold";
		// no renewal of the waiting tickets meanwhile: fixed leases, renewed every 50 s
		LockEngine slowRenewal = new LockEngine(this.leases,
				LockEngineSettings.of(BACKOFF).withRenewInterval(Duration.ofSeconds(50)));
		ExecutorService waiters = Executors.newFixedThreadPool(2);
		try {
			for (LockEngine holderEngine : List.of(this.nodeA, slowRenewal)) {
				String label = (holderEngine == slowRenewal) ? "handed on in its JVM" : "after another engine's release";
				LockHandle held = holderEngine
					.acquire(new LockRequest(key, Duration.ZERO, LEASE, false, Duration.ZERO, DbLockMode.FAIR));
				Future<Instant> waiter = waiters.submit(() -> {
					try (LockHandle lock = slowRenewal.acquire(
							new LockRequest(key, LONG_WAIT, Duration.ofSeconds(60), false, Duration.ZERO, DbLockMode.FAIR))) {
						return expiry(lock.fencingToken());
					}
				});
				awaitQueued(key, 2);
				long ticket = this.jdbc.queryForObject("SELECT MAX(ticket) FROM " + QUEUE + " WHERE lock_key = ?",
						Long.class, key);
				Instant enqueued = expiry(ticket);
				// the scenario itself: the waiter waits a while before its hold
				LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
				held.close();
				Instant whenHeld = waiter.get(1, TimeUnit.MINUTES);
				assertThat(whenHeld).as(label).isAfter(enqueued);
			}
		}
		finally {
			waiters.shutdownNow();
			slowRenewal.close();
		}
	}

	private Instant expiry(long ticket) {
		return this.jdbc.queryForObject("SELECT expires_at FROM " + QUEUE + " WHERE ticket = ?", Timestamp.class, ticket)
			.toInstant();
	}

	private static long cycles(LockEngine engine, LockRequest request, int cycles) {
		long start = System.nanoTime();
		for (int i = 0; i < cycles; i++) {
			try (LockHandle lock = engine.acquire(request)) {
				assertThat(lock.isHeld()).isTrue();
			}
		}
		return System.nanoTime() - start;
	}

	private static long questions(JdbcTemplate session) {
		return session.query("SHOW SESSION STATUS LIKE 'Questions'", (rs, i) -> rs.getLong(2)).get(0);
	}

	/**
	 * A waiter with a fixed lease shorter than its wait, and than the renewal interval,
	 * keeps its place: its ticket is renewed while it waits, and it holds the key with the
	 * ticket it first had.
	 */
	@Test
	void aWaiterWithAShortFixedLeaseKeepsItsPlace() throws Exception {
		String key = "fair-short-fixed-lease";
		Duration lease = Duration.ofSeconds(2);
		LockEngine slowRenewal = new LockEngine(this.leases,
				LockEngineSettings.of(BACKOFF).withRenewInterval(Duration.ofSeconds(10)));
		ExecutorService waiterThread = Executors.newSingleThreadExecutor();
		try {
			LockHandle held = this.nodeA.acquire(request(key, Duration.ZERO));
			Future<Long> waiter = waiterThread.submit(() -> {
				try (LockHandle lock = slowRenewal
					.acquire(new LockRequest(key, LONG_WAIT, lease, false, Duration.ZERO, DbLockMode.FAIR))) {
					assertThat(lock.isHeld()).isTrue();
					return lock.fencingToken();
				}
			});
			awaitQueued(key, 2);
			long ticket = this.jdbc.queryForObject("SELECT MAX(ticket) FROM " + QUEUE + " WHERE lock_key = ?",
					Long.class, key);
			// the scenario itself: waiting longer than its lease
			long until = System.nanoTime() + lease.multipliedBy(3).dividedBy(2).toNanos();
			while (System.nanoTime() - until < 0) {
				LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
			}
			assertThat(this.jdbc.queryForObject("SELECT COUNT(*) FROM " + QUEUE + " WHERE ticket = ? AND expires_at > "
					+ database().dialect(this.dataSource).now(), Integer.class, ticket)).isOne();
			held.close();
			assertThat(waiter.get(1, TimeUnit.MINUTES)).isEqualTo(ticket);
		}
		finally {
			waiterThread.shutdownNow();
			slowRenewal.close();
		}
	}

	/**
	 * While a thread of one engine holds the key, six threads of another wait: only the
	 * earliest of them asks the database whether it is the head; the others wait locally,
	 * and the renewals of all six waiting tickets go together.
	 */
	@Test
	void onlyTheEarliestWaiterOfAnEngineAsksTheDatabase() throws Exception {
		String key = "fair-one-asks";
		int waiters = 6;
		LockHandle held = this.nodeA.acquire(request(key, Duration.ZERO));
		this.leases.asked.clear();
		ExecutorService threads = Executors.newFixedThreadPool(waiters);
		LockEngine fastRenewal = new LockEngine(this.leases,
				LockEngineSettings.of(BACKOFF).withRenewInterval(Duration.ofMillis(100)));
		try {
			List<Future<Long>> calls = new ArrayList<>();
			for (int i = 0; i < waiters; i++) {
				calls.add(threads.submit(() -> {
					try (LockHandle lock = fastRenewal.acquire(request(key, LONG_WAIT))) {
						return lock.fencingToken();
					}
				}));
				awaitQueued(key, i + 2);
			}
			int renewals = this.leases.largestRenewal.get();
			long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(500);
			long deadline = System.nanoTime() + LONG_WAIT.toNanos();
			// a time of waiting, during which several renewal periods pass
			while ((System.nanoTime() - until < 0 || this.leases.largestRenewal.get() < waiters)
					&& System.nanoTime() - deadline < 0) {
				LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
			}
			Set<Long> askedWhileHeld = Set.copyOf(this.leases.asked);
			System.out.println(database() + " fair: tickets that asked while another engine held the key: "
					+ askedWhileHeld.size() + " of " + waiters + ", largest renewal " + this.leases.largestRenewal
					+ " tickets in one call (before " + renewals + ")");
			assertThat(askedWhileHeld).hasSize(1);
			assertThat(this.leases.largestRenewal.get()).isEqualTo(waiters);
			held.close();
			List<Long> tokens = new ArrayList<>();
			for (Future<Long> call : calls) {
				tokens.add(call.get(1, TimeUnit.MINUTES));
			}
			assertThat(tokens).doesNotHaveDuplicates().allMatch((token) -> token > held.fencingToken());
		}
		finally {
			threads.shutdownNow();
			fastRenewal.close();
		}
	}

	/**
	 * A fair release whose delete fails is reported to its caller: {@code close()} throws,
	 * naming the instant until which the key stays taken; another engine finds it taken.
	 */
	@Test
	void aReleaseThatFailsIsReportedToItsCaller() {
		int rounds = 10;
		int silentCloses = 0;
		int closesWithoutItsEnd = 0;
		this.leases.failLeaves = true;
		try {
			for (int i = 0; i < rounds; i++) {
				String key = "fair-release-fails-" + i;
				LockHandle handle = this.nodeA.acquire(request(key, Duration.ZERO));
				try {
					handle.close();
					silentCloses++;
				}
				catch (LockReleaseException ex) {
					if (!ex.getMessage().contains(ex.getTakenUntil().toString())
							|| ex.getTakenUntil().isBefore(java.time.Instant.now())) {
						closesWithoutItsEnd++;
					}
				}
				assertThatExceptionOfType(LockAcquisitionException.class)
					.isThrownBy(() -> this.nodeB.acquire(request(key, Duration.ZERO)));
			}
		}
		finally {
			this.leases.failLeaves = false;
		}
		System.out.println(database() + " fair: " + rounds + " releases that fail (" + this.leases.failedLeaves
				+ " failed leaves): " + silentCloses + " closes returned normally, " + closesWithoutItsEnd
				+ " reports without the lease's end");
		assertThat(silentCloses).isZero();
		assertThat(closesWithoutItsEnd).isZero();
	}

	/**
	 * A held ticket whose renewal is stuck on the database (every renewal statement stalls)
	 * is reported lost (the listeners' {@code lost}, the ERROR log) when its lease ends on the
	 * local clock, while the renewal still waits.
	 */
	@Test
	void aTicketWhoseRenewalIsStuckIsReportedLostWhenItsLeaseEnds() throws Exception {
		CountDownLatch stall = new CountDownLatch(1);
		CountDownLatch reported = new CountDownLatch(1);
		try (LockEngine renewing = new LockEngine(this.leases,
				new LockEngineSettings(BACKOFF, Duration.ofMillis(100), Duration.ofMillis(50)))) {
			renewing.addListener(new LockListener() {
				@Override
				public void lost(String key, DbLockMode mode) {
					if (key.equals("stuck-renewal")) {
						reported.countDown();
					}
				}
			});
			LockHandle handle = renewing.acquire(new LockRequest("stuck-renewal", LONG_WAIT, Duration.ofMillis(600), true,
					Duration.ZERO, DbLockMode.FAIR));
			try {
				int before = this.leases.stalledRenewals.get();
				this.leases.stallRenewals = stall;
				assertThat(reported.await(LONG_WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
				assertThat(this.leases.stalledRenewals.get()).isGreaterThan(before);
				assertThat(stall.getCount()).as("the renewal still waits on the database").isOne();
				assertThat(handle.isHeld()).isFalse();
			}
			finally {
				// the thread's context is left empty for the tests after it
				handle.close();
			}
		}
		finally {
			this.leases.stallRenewals = null;
			stall.countDown();
		}
	}

	/**
	 * An enqueue whose statement the client gave up on (it stalled past the statement
	 * timeout, here in a test-only trigger that stalls a key's first ticket) and that commits
	 * after the first clean-up found nothing leaves no ghost ticket at the queue's head: it is
	 * deleted once it lands, long before its lease would end.
	 */
	@Test
	void anOrphanedTicketThatLandsAfterTheFirstCleanUpIsDeleted() {
		// PostgreSQL runs an abandoned statement to its end; MariaDB ends it when its client is gone
		assumeThat(database()).isEqualTo(TestDatabase.POSTGRESQL);
		int keys = 3;
		Duration lease = Duration.ofSeconds(20);
		Duration freedWithin = lease.dividedBy(2);
		this.jdbc.execute("CREATE TABLE IF NOT EXISTS db_lock_test_landed (lock_key VARCHAR(255))");
		this.jdbc.update("DELETE FROM db_lock_test_landed");
		this.jdbc.execute("CREATE OR REPLACE FUNCTION db_lock_test_stall() RETURNS trigger AS $$ BEGIN "
				+ "IF NEW.lock_key LIKE 'stalled-%' AND NOT EXISTS (SELECT 1 FROM db_lock_test_landed l "
				+ "WHERE l.lock_key = NEW.lock_key) THEN PERFORM pg_sleep(3); "
				+ "INSERT INTO db_lock_test_landed VALUES (NEW.lock_key); END IF; RETURN NEW; END $$ LANGUAGE plpgsql");
		this.jdbc.execute("DROP TRIGGER IF EXISTS db_lock_test_stall ON " + QUEUE);
		this.jdbc.execute("CREATE TRIGGER db_lock_test_stall BEFORE INSERT ON " + QUEUE + " FOR EACH ROW "
				+ "EXECUTE FUNCTION db_lock_test_stall()");
		int ghosts = 0;
		int landed;
		long freedAfterMillis = 0;
		// the cancel of the abandoned statement does not reach the server (a partition): it runs on
		CountingRepository impatient = new CountingRepository(this.dataSource,
				CancelNotSent.postgreSql(database().dialect(this.dataSource).table()), Duration.ofMillis(500));
		for (int i = 0; i < keys; i++) {
			// the keys' rows exist: the stall is in the enqueue sent with its look, whose commit lands late
			this.jdbc.update("INSERT INTO " + TestDatabase.TABLE + "_fair_keys (lock_key) VALUES (?) ON CONFLICT DO NOTHING",
					"stalled-" + i);
		}
		try (LockEngine stalled = new LockEngine(impatient, LockEngineSettings.of(BACKOFF))) {
			for (int i = 0; i < keys; i++) {
				LockRequest request = new LockRequest("stalled-" + i, Duration.ZERO, lease, false, Duration.ZERO,
						DbLockMode.FAIR);
				assertThatExceptionOfType(DbLockException.class).isThrownBy(() -> stalled.acquire(request));
			}
			// every orphaned statement ran to its end in the server and committed
			long landing = System.nanoTime() + LONG_WAIT.toNanos();
			while (this.jdbc.queryForObject("SELECT COUNT(*) FROM db_lock_test_landed", Integer.class) < keys) {
				assertThat(System.nanoTime() - landing).as("the stalled tickets never landed").isNegative();
				LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
			}
			landed = this.jdbc.queryForObject("SELECT COUNT(*) FROM db_lock_test_landed", Integer.class);
			long since = System.nanoTime();
			for (int i = 0; i < keys; i++) {
				LockHandle handle = null;
				while (handle == null && System.nanoTime() - since < freedWithin.toNanos()) {
					try {
						handle = this.nodeB.acquire(request("stalled-" + i, Duration.ofMillis(200)));
					}
					catch (LockAcquisitionException ex) {
						// asked again after the wait of 200 ms
					}
				}
				if (handle == null) {
					ghosts++;
				}
				else {
					freedAfterMillis = Math.max(freedAfterMillis, (System.nanoTime() - since) / 1_000_000);
					handle.close();
				}
			}
		}
		finally {
			this.jdbc.execute("DROP TRIGGER IF EXISTS db_lock_test_stall ON " + QUEUE);
		}
		System.out.println(database() + " fair: " + keys + " enqueues stalled past a 500 ms statement timeout: "
				+ landed + " landed after the first clean-up, " + ghosts + " keys still behind a ghost ticket "
				+ freedWithin + " later (lease " + lease + "); the others free " + freedAfterMillis
				+ " ms after the last landed");
		assertThat(ghosts).isZero();
	}

	/** A real repository whose fair queue counts the statements its callers send. */
	static final class CountingRepository extends JdbcLockRepository {

		final AtomicInteger statements = new AtomicInteger();

		/** The tickets that asked for their place. */
		final Set<Long> asked = ConcurrentHashMap.newKeySet();

		final AtomicInteger largestRenewal = new AtomicInteger();

		/** Whether every leave fails before it reaches the database: the tickets stay. */
		volatile boolean failLeaves;

		/** While set, every renewal waits for it: the database stalls the renewals. */
		volatile @Nullable CountDownLatch stallRenewals;

		final AtomicInteger stalledRenewals = new AtomicInteger();

		final AtomicInteger failedLeaves = new AtomicInteger();

		private volatile @Nullable FairLockRepository counting;

		CountingRepository(DataSource dataSource, SqlDialect dialect) {
			super(dataSource, dialect);
		}

		CountingRepository(DataSource dataSource, SqlDialect dialect, Duration statementTimeout) {
			super(dataSource, dialect, statementTimeout);
		}

		@Override
		public Optional<FairLockRepository> fairQueue() {
			FairLockRepository queue = this.counting;
			if (queue == null) {
				queue = new Counting(super.fairQueue().orElseThrow());
				this.counting = queue;
			}
			return Optional.of(queue);
		}

		private final class Counting implements FairLockRepository {

			private final FairLockRepository delegate;

			Counting(FairLockRepository delegate) {
				this.delegate = delegate;
			}

			@Override
			public Ticket enqueue(String key, String owner, Duration lease) {
				CountingRepository.this.statements.incrementAndGet();
				return this.delegate.enqueue(key, owner, lease);
			}

			@Override
			public Enqueued enqueueAndLook(String key, String owner, Duration lease) {
				// one statement: a look that goes with the enqueue is not a ticket asking for its place
				CountingRepository.this.statements.incrementAndGet();
				return this.delegate.enqueueAndLook(key, owner, lease);
			}

			@Override
			public List<HeldTicket> holders(int limit) {
				return this.delegate.holders(limit);
			}

			@Override
			public long head(Ticket ticket) {
				CountingRepository.this.statements.incrementAndGet();
				CountingRepository.this.asked.add(ticket.number());
				return this.delegate.head(ticket);
			}

			@Override
			public long following(Ticket ticket) {
				CountingRepository.this.statements.incrementAndGet();
				return this.delegate.following(ticket);
			}

			@Override
			public List<Boolean> renewAll(List<Ticket> tickets, Duration lease) {
				CountingRepository.this.statements.incrementAndGet();
				CountingRepository.this.largestRenewal.accumulateAndGet(tickets.size(), Math::max);
				CountDownLatch stall = CountingRepository.this.stallRenewals;
				if (stall != null) {
					CountingRepository.this.stalledRenewals.incrementAndGet();
					try {
						stall.await();
					}
					catch (InterruptedException ex) {
						Thread.currentThread().interrupt();
					}
				}
				return this.delegate.renewAll(tickets, lease);
			}

			@Override
			public boolean leave(Ticket ticket) {
				CountingRepository.this.statements.incrementAndGet();
				if (CountingRepository.this.failLeaves) {
					CountingRepository.this.failedLeaves.incrementAndGet();
					throw new DataAccessResourceFailureException("Test fault: the leave of " + ticket + " failed");
				}
				return this.delegate.leave(ticket);
			}

			@Override
			public boolean abandon(String key, String owner) {
				return this.delegate.abandon(key, owner);
			}

			@Override
			public int abandonAll(Map<String, String> keysByOwner) {
				return this.delegate.abandonAll(keysByOwner);
			}

			@Override
			public int deleteExpired(int limit) {
				return this.delegate.deleteExpired(limit);
			}

			@Override
			public @Nullable String unavailable() {
				return this.delegate.unavailable();
			}

		}

	}

}
