package io.github.dblock.engine;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The local gate with real threads: arrival order, hand-over, giving up.
 */
class LocalGateTests {

	private final LocalGate<String> gate = new LocalGate<>();

	private final ExecutorService threads = Executors.newCachedThreadPool();

	@AfterEach
	void stopThreads() {
		this.threads.shutdownNow();
	}

	@Test
	void aThreadThatWouldNotWaitIsRefusedAtOnceByAHeldGate() throws Exception {
		assertThat(this.gate.enter(0)).isNotNull();
		assertThat(this.gate.enter(0)).isNull();
	}

	@Test
	void aLeavingThreadHandsOnToTheFirstWaiterInArrivalOrder() throws Exception {
		assertThat(this.gate.enter(0)).isNotNull();
		CompletableFuture<LocalGate.Passage<String>> first = CompletableFuture
			.supplyAsync(() -> enter(Duration.ofMinutes(1).toNanos()), this.threads);
		awaitQueued(first, 1);
		CompletableFuture<LocalGate.Passage<String>> second = CompletableFuture
			.supplyAsync(() -> enter(Duration.ofMinutes(1).toNanos()), this.threads);
		awaitQueued(second, 2);
		assertThat(this.gate.handOn("lease")).isTrue();
		assertThat(first.get(1, TimeUnit.MINUTES).handedOn()).isEqualTo("lease");
		assertThat(second).isNotDone();
		this.gate.leave(42);
		assertThat(second.get(1, TimeUnit.MINUTES)).isEqualTo(new LocalGate.Passage<String>(null, 42));
	}

	@Test
	void nobodyToHandOnToKeepsTheGateTakenUntilLeft() throws Exception {
		assertThat(this.gate.enter(0)).isNotNull();
		assertThat(this.gate.handOn("lease")).isFalse();
		assertThat(this.gate.enter(0)).isNull();
		this.gate.leave();
		assertThat(this.gate.enter(0)).isEqualTo(LocalGate.Passage.free());
	}

	@Test
	void aWaiterWhoseTimeRunsOutLeavesTheQueue() throws Exception {
		assertThat(this.gate.enter(0)).isNotNull();
		long start = System.nanoTime();
		assertThat(this.gate.enter(Duration.ofMillis(200).toNanos())).isNull();
		assertThat(System.nanoTime() - start).isGreaterThanOrEqualTo(Duration.ofMillis(200).toNanos());
		assertThat(this.gate.queued()).isZero();
	}

	private LocalGate.Passage<String> enterWithoutWaiting() {
		return enter(0);
	}

	private LocalGate.Passage<String> enter(long nanos) {
		try {
			return this.gate.enter(nanos);
		}
		catch (InterruptedException ex) {
			throw new IllegalStateException(ex);
		}
	}

	private void awaitQueued(CompletableFuture<?> entering, int queued) {
		await().atMost(Duration.ofSeconds(10)).until(() -> entering.isDone() || this.gate.queued() == queued);
		assertThat(entering).isNotDone();
	}

}
