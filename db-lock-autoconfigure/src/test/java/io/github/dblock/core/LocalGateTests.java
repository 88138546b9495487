package io.github.dblock.core;

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
 * The local gate with real threads: what a thread that would not wait learns while the
 * gate is being released by another thread.
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
	void aThreadArrivingTakesWhatWasLeftPendingAtOnce() throws Exception {
		assertThat(this.gate.enter(0)).isNotNull();
		assertThat(this.gate.handOnOrRelease("lease")).isFalse();
		assertThat(this.gate.enter(0)).isNotNull().extracting(LocalGate.Passage::handedOn).isEqualTo("lease");
		// taken: nothing is left to reclaim, and the gate is held
		assertThat(this.gate.reclaim("lease")).isFalse();
		assertThat(this.gate.enter(0)).isNull();
	}

	@Test
	void aThreadThatWouldNotWaitPassesWhenAReclaimedGateIsLeft() throws Exception {
		releaseAndReclaim();
		CompletableFuture<LocalGate.Passage<String>> trying = CompletableFuture.supplyAsync(this::enterWithoutWaiting,
				this.threads);
		awaitQueued(trying, 1);
		this.gate.leave();
		assertThat(trying.get(1, TimeUnit.MINUTES)).isNotNull().extracting(LocalGate.Passage::handedOn).isNull();
		// it holds the gate now
		assertThat(this.gate.enter(0)).isNull();
	}

	@Test
	void aThreadThatWouldNotWaitTakesWhatAReclaimedGateHandsOn() throws Exception {
		releaseAndReclaim();
		CompletableFuture<LocalGate.Passage<String>> trying = CompletableFuture.supplyAsync(this::enterWithoutWaiting,
				this.threads);
		awaitQueued(trying, 1);
		assertThat(this.gate.handOn("lease")).isTrue();
		assertThat(trying.get(1, TimeUnit.MINUTES)).isNotNull().extracting(LocalGate.Passage::handedOn).isEqualTo("lease");
	}

	@Test
	void aThreadThatWouldNotWaitIsRefusedWhenTheGateGoesToAThreadAheadOfIt() throws Exception {
		releaseAndReclaim();
		CompletableFuture<LocalGate.Passage<String>> waiting = CompletableFuture
			.supplyAsync(() -> enter(Duration.ofMinutes(1).toNanos()), this.threads);
		awaitQueued(waiting, 1);
		CompletableFuture<LocalGate.Passage<String>> trying = CompletableFuture.supplyAsync(this::enterWithoutWaiting,
				this.threads);
		awaitQueued(trying, 2);
		this.gate.leave();
		assertThat(waiting.get(1, TimeUnit.MINUTES)).isNotNull();
		assertThat(trying.get(1, TimeUnit.MINUTES)).isNull();
		// passed on: a thread that would not wait is refused at once again
		assertThat(this.gate.enter(0)).isNull();
	}

	/** A holder leaves its item pending, and another thread takes it back to release it. */
	private void releaseAndReclaim() throws InterruptedException {
		assertThat(this.gate.enter(0)).isNotNull();
		assertThat(this.gate.handOnOrRelease("lease")).isFalse();
		assertThat(this.gate.reclaim("lease")).isTrue();
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
