package io.github.dblock.integration;

import java.time.Duration;
import java.util.ConcurrentModificationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import com.zaxxer.hikari.HikariDataSource;
import io.github.dblock.DbLockException;
import io.github.dblock.engine.Backoff;
import io.github.dblock.engine.LockEngine;
import io.github.dblock.engine.LockEngineSettings;
import io.github.dblock.jdbc.JdbcLockRepository;
import io.github.dblock.support.DbLockTemplate;
import io.github.dblock.testsupport.Concurrently;
import io.github.dblock.testsupport.TestDatabase;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import org.springframework.integration.leader.AbstractCandidate;
import org.springframework.integration.leader.Context;
import org.springframework.integration.support.leader.LockRegistryLeaderInitiator;
import org.springframework.integration.support.locks.DistributedLock;
import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * The contract of {@link DbLockRegistry} on a real database: two registries, each over an
 * engine of its own on one lock table, play two nodes; Spring Integration's own
 * {@link LockRegistryLeaderInitiator} runs on them.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class DbLockRegistryContractTests {

	/** The default lease: renewed by the watchdog while held, so a hold may outlast it. */
	private static final Duration LEASE = Duration.ofSeconds(2);

	private static final Duration LONG_WAIT = Duration.ofSeconds(60);

	private HikariDataSource dataSource;

	private JdbcTemplate jdbc;

	private JdbcLockRepository repository;

	private LockEngine engineA;

	private LockEngine engineB;

	private DbLockTemplate templateA;

	private DbLockRegistry nodeA;

	private DbLockRegistry nodeB;

	protected abstract TestDatabase database();

	@BeforeAll
	void createDataSource() {
		this.dataSource = database().dataSource(20);
		this.jdbc = new JdbcTemplate(this.dataSource);
		this.repository = new JdbcLockRepository(this.dataSource, database().dialect(this.dataSource));
	}

	@AfterAll
	void closeDataSource() {
		if (this.dataSource != null) {
			this.dataSource.close();
		}
	}

	/** Engines of their own for every test: no hold of an earlier test is left in a later one. */
	@BeforeEach
	void createNodes() {
		this.jdbc.update("DELETE FROM " + TestDatabase.TABLE);
		Backoff backoff = new Backoff(Duration.ofMillis(2), Duration.ofMillis(20));
		this.engineA = new LockEngine(this.repository, LockEngineSettings.of(backoff));
		this.engineB = new LockEngine(this.repository, LockEngineSettings.of(backoff));
		this.templateA = new DbLockTemplate(this.engineA, "si", LONG_WAIT, LEASE);
		this.nodeA = new DbLockRegistry(this.templateA);
		this.nodeB = new DbLockRegistry(new DbLockTemplate(this.engineB, "si", LONG_WAIT, LEASE));
	}

	@AfterEach
	void closeNodes() {
		this.engineA.close();
		this.engineB.close();
	}

	@Test
	void twoNodesNeverHoldAKeyAtOnce() throws Exception {
		int threadsPerNode = 3;
		int rounds = 30;
		AtomicInteger inside = new AtomicInteger();
		AtomicInteger overlaps = new AtomicInteger();
		AtomicInteger[] acquiredBy = { new AtomicInteger(), new AtomicInteger() };
		long[] counter = new long[1];
		Concurrently.run(2 * threadsPerNode, (thread) -> {
			int node = thread % 2;
			DbLockRegistry registry = (node == 0) ? this.nodeA : this.nodeB;
			for (int round = 0; round < rounds; round++) {
				DistributedLock lock = registry.obtain("counter");
				// every way in: a renewed lease, a wait, a fixed lease
				switch (round % 3) {
					case 0 -> lock.lock();
					case 1 -> assertThat(lock.tryLock(LONG_WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
					default -> lock.lock(Duration.ofSeconds(30));
				}
				try {
					if (inside.incrementAndGet() > 1) {
						overlaps.incrementAndGet();
					}
					acquiredBy[node].incrementAndGet();
					long read = counter[0];
					Thread.yield();
					counter[0] = read + 1;
					inside.decrementAndGet();
				}
				finally {
					lock.unlock();
				}
			}
		});
		assertThat(overlaps).hasValue(0);
		assertThat(counter[0]).isEqualTo(2L * threadsPerNode * rounds);
		assertThat(acquiredBy[0]).hasValue(threadsPerNode * rounds);
		assertThat(acquiredBy[1]).hasValue(threadsPerNode * rounds);
		assertThat(this.jdbc.queryForObject("SELECT COUNT(*) FROM " + TestDatabase.TABLE, Integer.class)).isZero();
	}

	@Test
	void theLocksOfAKeyActAsOneWhoseKeyIsTheTemplates() {
		DistributedLock lock = this.nodeA.obtain("orders");
		lock.lock();
		try {
			assertThat(this.templateA.obtain("orders").current().key()).isEqualTo("si:orders");
			assertThat(this.jdbc.queryForObject("SELECT COUNT(*) FROM " + TestDatabase.TABLE, Integer.class)).isOne();
			// another object of the same key (any key whose toString() is the same): reentrant, unlocked through it
			DistributedLock again = this.nodeA.obtain(new StringBuilder("orders"));
			assertThat(again.tryLock()).isTrue();
			again.unlock();
			assertThat(this.templateA.obtain("orders").current()).isNotNull();
		}
		finally {
			this.nodeA.obtain("orders").unlock();
		}
		assertThat(this.templateA.obtain("orders").current()).isNull();
		assertThat(this.jdbc.queryForObject("SELECT COUNT(*) FROM " + TestDatabase.TABLE, Integer.class)).isZero();
		assertThatExceptionOfType(DbLockException.class).isThrownBy(() -> this.nodeA.obtain(" "));
	}

	@Test
	void theLockIsReentrantForItsThread() throws Exception {
		DistributedLock lock = this.nodeA.obtain("reentrant");
		lock.lock();
		assertThat(lock.tryLock()).isTrue();
		assertThat(this.nodeA.obtain("reentrant").tryLock(1, TimeUnit.SECONDS)).isTrue();
		lock.unlock();
		lock.unlock();
		assertThat(this.nodeB.obtain("reentrant").tryLock()).isFalse();
		lock.unlock();
		DistributedLock other = this.nodeB.obtain("reentrant");
		assertThat(other.tryLock()).isTrue();
		other.unlock();
		// a fixed lease inside a renewed one serves as it is; a renewed one inside a fixed one is refused
		lock.lock();
		lock.lock(Duration.ofSeconds(10));
		lock.unlock();
		lock.unlock();
		lock.lock(Duration.ofSeconds(10));
		try {
			assertThat(lock.tryLock(Duration.ofSeconds(1), Duration.ofSeconds(20))).isTrue();
			lock.unlock();
			assertThatExceptionOfType(DbLockException.class).isThrownBy(lock::tryLock);
			assertThat(this.nodeB.obtain("reentrant").tryLock()).isFalse();
		}
		finally {
			lock.unlock();
		}
		assertThat(this.nodeB.obtain("reentrant").tryLock()).isTrue();
		this.nodeB.obtain("reentrant").unlock();
	}

	@Test
	void tryLockGivesUpAfterItsWait() throws Exception {
		DistributedLock held = this.nodeA.obtain("busy");
		held.lock();
		try {
			DistributedLock lock = this.nodeB.obtain("busy");
			assertThat(lock.tryLock()).isFalse();
			long start = System.nanoTime();
			assertThat(lock.tryLock(300, TimeUnit.MILLISECONDS)).isFalse();
			assertThat(Duration.ofNanos(System.nanoTime() - start)).isBetween(Duration.ofMillis(290),
					Duration.ofSeconds(5));
			start = System.nanoTime();
			assertThat(lock.tryLock(Duration.ofMillis(300), Duration.ofSeconds(10))).isFalse();
			assertThat(Duration.ofNanos(System.nanoTime() - start)).isBetween(Duration.ofMillis(290),
					Duration.ofSeconds(5));
			// a thread of the holding node waits for the holding thread too
			assertThat(CompletableFuture.supplyAsync(() -> this.nodeA.obtain("busy").tryLock()).get()).isFalse();
		}
		finally {
			held.unlock();
		}
		DistributedLock lock = this.nodeB.obtain("busy");
		assertThat(lock.tryLock(Duration.ofSeconds(5), Duration.ofSeconds(10))).isTrue();
		lock.unlock();
	}

	@Test
	void executeLockedRunsHoldingTheLockAndTimesOutWhileAnotherNodeHoldsIt() throws Exception {
		assertThat(this.nodeA.executeLocked("task", () -> this.nodeB.obtain("task").tryLock())).isFalse();
		DistributedLock held = this.nodeB.obtain("task");
		held.lock();
		try {
			assertThatExceptionOfType(TimeoutException.class)
				.isThrownBy(() -> this.nodeA.executeLocked("task", Duration.ofMillis(200), () -> {
					throw new AssertionError("ran without the lock");
				}));
		}
		finally {
			held.unlock();
		}
		assertThat(this.nodeA.executeLocked("task", Duration.ofSeconds(5), () -> "ran")).isEqualTo("ran");
	}

	@Test
	void aThreadThatDoesNotHoldTheLockCannotUnlockIt() throws Exception {
		DistributedLock lock = this.nodeA.obtain("owned");
		assertThatExceptionOfType(IllegalMonitorStateException.class).isThrownBy(lock::unlock);
		lock.lock();
		try {
			CompletableFuture<Void> other = CompletableFuture.runAsync(() -> this.nodeA.obtain("owned").unlock());
			assertThat(other).failsWithin(Duration.ofSeconds(10))
				.withThrowableOfType(java.util.concurrent.ExecutionException.class)
				.withCauseInstanceOf(IllegalMonitorStateException.class);
			assertThat(this.nodeB.obtain("owned").tryLock()).isFalse();
			assertThatExceptionOfType(UnsupportedOperationException.class).isThrownBy(lock::newCondition);
		}
		finally {
			lock.unlock();
		}
		assertThatExceptionOfType(IllegalMonitorStateException.class).isThrownBy(lock::unlock);
	}

	@Test
	void aLockWithATimeToLiveExpiresAndAnotherNodeTakesIt() throws Exception {
		DistributedLock lock = this.nodeA.obtain("ttl");
		lock.lock(Duration.ofMillis(700));
		long start = System.nanoTime();
		DistributedLock other = this.nodeB.obtain("ttl");
		assertThat(other.tryLock(Duration.ofSeconds(20), Duration.ofSeconds(30))).isTrue();
		Duration waited = Duration.ofNanos(System.nanoTime() - start);
		System.out.println("db-lock registry on " + database() + ": a 700 ms time-to-live taken over after "
				+ waited.toMillis() + " ms");
		assertThat(waited).isGreaterThan(Duration.ofMillis(500));
		// the first holder's lease is gone: it cannot be renewed, and unlocking it says so, as JdbcLockRegistry does
		assertThatExceptionOfType(IllegalStateException.class).isThrownBy(() -> this.nodeA.renewLock("ttl"));
		assertThatExceptionOfType(ConcurrentModificationException.class).isThrownBy(lock::tryLock);
		assertThatExceptionOfType(ConcurrentModificationException.class).isThrownBy(lock::unlock)
			.withMessageContaining("si:ttl");
		assertThat(this.nodeA.obtain("ttl").tryLock()).isFalse();
		other.unlock();
	}

	@Test
	void aThreadWhoseHoldWasLostCannotReenterBeforeItUnlocks() throws Exception {
		DistributedLock lock = this.nodeA.obtain("lost");
		lock.lock(Duration.ofMillis(300));
		// nobody takes it: its time is over on the local clock all the same
		await().pollInSameThread().atMost(Duration.ofSeconds(10))
			.until(() -> !this.templateA.obtain("lost").current().isHeld());
		assertThatExceptionOfType(ConcurrentModificationException.class).isThrownBy(lock::tryLock)
			.withMessageContaining("si:lost");
		assertThatExceptionOfType(ConcurrentModificationException.class)
			.isThrownBy(() -> lock.lock(Duration.ofSeconds(10)));
		assertThatExceptionOfType(ConcurrentModificationException.class).isThrownBy(lock::unlock);
		assertThat(lock.tryLock()).isTrue();
		lock.unlock();
		assertThat(this.nodeB.obtain("lost").tryLock()).isTrue();
		this.nodeB.obtain("lost").unlock();
	}

	@Test
	void renewLockExtendsAFixedLease() throws Exception {
		DistributedLock lock = this.nodeA.obtain("renewed");
		lock.lock(Duration.ofMillis(700));
		this.nodeA.renewLock("renewed", Duration.ofSeconds(5));
		// without the renewal, the lease would end after 700 ms and node B would have it
		assertThat(this.nodeB.obtain("renewed").tryLock(Duration.ofMillis(2000), Duration.ofSeconds(10))).isFalse();
		this.nodeA.renewLock("renewed");
		lock.unlock();
		assertThat(this.nodeB.obtain("renewed").tryLock()).isTrue();
		this.nodeB.obtain("renewed").unlock();
		assertThatExceptionOfType(IllegalMonitorStateException.class)
			.isThrownBy(() -> this.nodeA.renewLock("renewed", Duration.ofSeconds(5)));
	}

	@Test
	void renewLockLeavesARenewedLeaseToTheWatchdog() throws Exception {
		DistributedLock lock = this.nodeA.obtain("watched");
		lock.lock();
		try {
			this.nodeA.renewLock("watched", Duration.ofMillis(100));
			// held past several default leases: the watchdog renews it
			assertThat(this.nodeB.obtain("watched").tryLock(LEASE.multipliedBy(2), Duration.ofSeconds(10))).isFalse();
			this.nodeA.renewLock("watched");
		}
		finally {
			lock.unlock();
		}
	}

	@Test
	void springIntegrationsLeaderInitiatorElectsOneLeaderAtATime() throws Exception {
		// a lease long enough that a watchdog starved by a busy machine does not lose it
		Duration lease = Duration.ofSeconds(10);
		Node a = new Node("a", new DbLockRegistry(new DbLockTemplate(this.engineA, "si", LONG_WAIT, lease)));
		Node b = new Node("b", new DbLockRegistry(new DbLockTemplate(this.engineB, "si", LONG_WAIT, lease)));
		AtomicBoolean sampling = new AtomicBoolean(true);
		AtomicLong samples = new AtomicLong();
		AtomicLong bothLeading = new AtomicLong();
		Thread sampler = new Thread(() -> {
			while (sampling.get()) {
				samples.incrementAndGet();
				if (a.initiator.getContext().isLeader() && b.initiator.getContext().isLeader()) {
					bothLeading.incrementAndGet();
				}
				Thread.onSpinWait();
			}
		});
		sampler.start();
		try {
			a.initiator.start();
			b.initiator.start();
			await().atMost(Duration.ofSeconds(20)).until(() -> a.granted.get() + b.granted.get() == 1);
			Node leader = (a.granted.get() == 1) ? a : b;
			Node follower = (leader == a) ? b : a;
			// one leader while the follower keeps trying (the sampler checks they never both lead)
			await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(20))
				.until(() -> leader.initiator.getContext().isLeader() && !follower.initiator.getContext().isLeader());
			long stopped = System.nanoTime();
			leader.initiator.stop();
			await().atMost(Duration.ofSeconds(20)).until(() -> follower.granted.get() == 1);
			// from the candidates' own times: the wait polls every 100 ms
			Duration handover = Duration.ofNanos(follower.grantedAt - stopped);
			System.out.println("db-lock registry on " + database() + ": LockRegistryLeaderInitiator handed over in "
					+ handover.toMillis() + " ms after the leader stopped (revoked there after "
					+ Duration.ofNanos(leader.revokedAt - stopped).toMillis() + " ms)");
			assertThat(leader.revoked).hasValue(1);
			assertThat(follower.initiator.getContext().isLeader()).isTrue();
			assertThat(leader.initiator.getContext().isLeader()).isFalse();
			follower.initiator.stop();
			await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(follower.revoked).hasValue(1));
		}
		finally {
			sampling.set(false);
			sampler.join();
			a.initiator.destroy();
			b.initiator.destroy();
		}
		assertThat(samples.get()).isPositive();
		assertThat(bothLeading).hasValue(0);
	}

	@Test
	void theLeaderInitiatorStandsAgainAfterItsLeaseWasLost() throws Exception {
		Node a = new Node("a", this.nodeA);
		try {
			a.initiator.start();
			await().atMost(Duration.ofSeconds(20)).until(() -> a.granted.get() == 1);
			// the lease is lost behind the leader's back; nobody else wants the key
			this.jdbc.update("DELETE FROM " + TestDatabase.TABLE);
			// its watchdog finds it lost, its next heartbeat revokes, and it is elected afresh
			await().atMost(Duration.ofSeconds(20)).until(() -> a.revoked.get() == 1 && a.granted.get() == 2);
			assertThat(a.initiator.getContext().isLeader()).isTrue();
			assertThat(this.jdbc.queryForObject("SELECT COUNT(*) FROM " + TestDatabase.TABLE, Integer.class)).isOne();
		}
		finally {
			a.initiator.destroy();
		}
	}

	/** A candidate of the role and its initiator, counting its grants and revocations. */
	private static final class Node {

		final AtomicInteger granted = new AtomicInteger();

		final AtomicInteger revoked = new AtomicInteger();

		volatile long grantedAt;

		volatile long revokedAt;

		final LockRegistryLeaderInitiator initiator;

		Node(String id, DbLockRegistry registry) {
			this.initiator = new LockRegistryLeaderInitiator(registry, new AbstractCandidate(id, "si-leader") {

				@Override
				public void onGranted(Context context) {
					Node.this.grantedAt = System.nanoTime();
					Node.this.granted.incrementAndGet();
				}

				@Override
				public void onRevoked(Context context) {
					Node.this.revokedAt = System.nanoTime();
					Node.this.revoked.incrementAndGet();
				}

			});
			this.initiator.setHeartBeatMillis(100);
			this.initiator.setBusyWaitMillis(20);
		}

	}

}
