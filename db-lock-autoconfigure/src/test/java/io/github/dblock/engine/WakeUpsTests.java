package io.github.dblock.engine;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.dblock.jdbc.ReleaseFeed;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.dao.DataAccessResourceFailureException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@link WakeUps} over a feed of the test's: when it listens, what it hands on, how it ends,
 * and what it does when the feed fails or cannot listen. The database's side is
 * {@code PostgreSqlWakeUpTests}'.
 */
class WakeUpsTests {

	private final LockScheduler scheduler = new LockScheduler();

	private final FakeFeed feed = new FakeFeed();

	private final List<String> woken = new CopyOnWriteArrayList<>();

	@AfterEach
	void stop() {
		this.scheduler.shutdown();
	}

	@Test
	void listensFromTheFirstRefusalAndHandsOnEachKeyTold() {
		WakeUps wakeUps = wakeUps(TimeUnit.MINUTES.toNanos(1));
		assertThat(this.feed.awaits.get()).isZero();
		wakeUps.refused();
		this.feed.tell("a");
		this.feed.tell("b");
		await().atMost(Duration.ofSeconds(20)).until(() -> this.woken.size() == 2);
		assertThat(this.woken).containsExactly("a", "b");
		wakeUps.close();
		assertThat(this.feed.closes.get()).isPositive();
		assertThat(this.scheduler.isTerminated()).isFalse();
	}

	@Test
	void endsAndGivesItsConnectionBackWhenNoWaiterWasRefusedForItsIdleTimeThenStartsAgain() {
		WakeUps wakeUps = wakeUps(TimeUnit.MILLISECONDS.toNanos(1));
		wakeUps.refused();
		await().atMost(Duration.ofSeconds(20)).until(() -> this.feed.closes.get() > 0);
		int awaits = this.feed.awaits.get();
		wakeUps.refused();
		await().atMost(Duration.ofSeconds(20)).until(() -> this.feed.closes.get() > 1);
		assertThat(this.feed.awaits.get()).isGreaterThanOrEqualTo(awaits);
		wakeUps.close();
	}

	@Test
	void aFailedFeedIsTakenAgainAndHandsOnWhatComesAfter() {
		WakeUps wakeUps = wakeUps(TimeUnit.MINUTES.toNanos(1));
		this.feed.failures.set(1);
		wakeUps.refused();
		this.feed.tell("after");
		await().atMost(Duration.ofSeconds(20)).until(() -> this.woken.contains("after"));
		assertThat(this.feed.failures.get()).isZero();
		wakeUps.close();
	}

	@Test
	void aFeedThatCannotListenIsNeverTakenAgain() {
		WakeUps wakeUps = wakeUps(TimeUnit.MINUTES.toNanos(1));
		this.feed.unsupported = true;
		wakeUps.refused();
		await().atMost(Duration.ofSeconds(20)).until(() -> this.feed.closes.get() > 0);
		int awaits = this.feed.awaits.get();
		wakeUps.refused();
		wakeUps.refused();
		wakeUps.close();
		assertThat(this.feed.awaits.get()).isEqualTo(awaits).isEqualTo(1);
	}

	@Test
	void noneHandsOnNothingAndKeepsNoStrategy() {
		WakeUps.NONE.onRelease(this.woken::add);
		WakeUps.NONE.refused();
		WakeUps.NONE.close();
		WakeUps.NONE.refused();
		assertThat(this.woken).isEmpty();
	}

	private WakeUps wakeUps(long idleNanos) {
		WakeUps wakeUps = new WakeUps(this.feed, this.scheduler.tasks("wake-ups"), idleNanos);
		wakeUps.onRelease(this.woken::add);
		return wakeUps;
	}

	/** Keys the test tells, a failure or "cannot listen" when asked, and a count of calls. */
	static final class FakeFeed implements ReleaseFeed {

		final BlockingQueue<String> told = new LinkedBlockingQueue<>();

		final AtomicInteger awaits = new AtomicInteger();

		final AtomicInteger closes = new AtomicInteger();

		final AtomicInteger failures = new AtomicInteger();

		volatile boolean unsupported;

		void tell(String key) {
			this.told.add(key);
		}

		@Override
		public List<String> await(Duration timeout) {
			this.awaits.incrementAndGet();
			if (this.unsupported) {
				throw new UnsupportedOperationException("a driver that cannot listen");
			}
			if (this.failures.getAndUpdate((n) -> Math.max(0, n - 1)) > 0) {
				throw new DataAccessResourceFailureException("the connection broke");
			}
			List<String> keys = new ArrayList<>();
			try {
				String first = this.told.poll(timeout.toNanos(), TimeUnit.NANOSECONDS);
				if (first != null) {
					keys.add(first);
					this.told.drainTo(keys);
				}
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
			return keys;
		}

		@Override
		public void close() {
			this.closes.incrementAndGet();
		}

	}

}
