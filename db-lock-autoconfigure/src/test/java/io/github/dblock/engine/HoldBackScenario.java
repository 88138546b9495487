package io.github.dblock.engine;

import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.function.Function;

import io.github.dblock.LockAcquisitionException;
import io.github.dblock.LockHandle;
import io.github.dblock.LockRequest;
import io.github.dblock.jdbc.LockRepository;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * A key ceded at the end of a local turn, for every mode that cedes: node A holds the key
 * with two local threads queued for it, the first with a wait that ends within A's hold-back
 * after the cede, the second with a long one; node B asks and is refused, which marks the key
 * wanted; A releases, and so cedes. The first local thread must be refused without taking
 * the key back, after the cede, and node B must hold the key before A's second thread.
 * <p>
 * Node A's hold-back is 9 s; node B pauses 3 to 6 s between attempts (on PostgreSQL a lease
 * waiter is woken by the cede instead), so B's next attempt comes before A's second thread
 * asks, and after the first thread's wait of 2.5 s has ended.
 */
final class HoldBackScenario {

	private static final Duration LONG_WAIT = Duration.ofSeconds(60);

	private HoldBackScenario() {
	}

	/**
	 * Runs the scenario.
	 * @param repositoryA node A's repository
	 * @param repositoryB node B's repository
	 * @param request the request for the key with a wait
	 * @param wanted whether node B's refused attempt marked the key wanted
	 * @throws Exception on any failure
	 */
	static void run(LockRepository repositoryA, LockRepository repositoryB, Function<Duration, LockRequest> request,
			BooleanSupplier wanted) throws Exception {
		LockEngine ceding = new LockEngine(repositoryA,
				LockEngineSettings.of(new Backoff(Duration.ofMillis(2), Duration.ofSeconds(6)))
					.withLocalTurn(Duration.ofNanos(1)));
		LockEngine slow = new LockEngine(repositoryB,
				LockEngineSettings.of(new Backoff(Duration.ofSeconds(6), Duration.ofSeconds(6))));
		ExecutorService pool = Executors.newFixedThreadPool(3);
		try {
			LockHandle held = ceding.acquire(request.apply(LONG_WAIT));
			AtomicReference<Thread> shortWaiter = new AtomicReference<>();
			Future<Long> shortWait = pool.submit(() -> {
				shortWaiter.set(Thread.currentThread());
				assertThatExceptionOfType(LockAcquisitionException.class)
					.isThrownBy(() -> ceding.acquire(request.apply(Duration.ofMillis(2500))));
				return System.nanoTime();
			});
			awaitParked(shortWaiter);
			AtomicReference<Thread> longWaiter = new AtomicReference<>();
			Future<Long> longWait = pool.submit(() -> {
				longWaiter.set(Thread.currentThread());
				try (LockHandle handle = ceding.acquire(request.apply(LONG_WAIT))) {
					return handle.fencingToken();
				}
			});
			awaitParked(longWaiter);
			Future<Long> remote = pool.submit(() -> {
				try (LockHandle handle = slow.acquire(request.apply(LONG_WAIT))) {
					return handle.fencingToken();
				}
			});
			await().atMost(Duration.ofSeconds(30)).until(wanted::getAsBoolean);
			long cededAt = System.nanoTime();
			held.close();
			// refused after the cede, in the hold-back: not in the queue before it
			assertThat(shortWait.get(60, TimeUnit.SECONDS)).isGreaterThan(cededAt);
			long remoteToken = remote.get(60, TimeUnit.SECONDS);
			assertThat(longWait.get(60, TimeUnit.SECONDS)).as("the token of node A's next holder")
				.isGreaterThan(remoteToken);
		}
		finally {
			pool.shutdownNow();
			ceding.close();
			slow.close();
		}
	}

	/**
	 * Waits until a thread has started and parks with a time limit.
	 * @param thread the thread, once it has set itself
	 */
	static void awaitParked(AtomicReference<Thread> thread) {
		await().atMost(Duration.ofSeconds(30))
			.until(() -> thread.get() != null && thread.get().getState() == Thread.State.TIMED_WAITING);
	}

}
