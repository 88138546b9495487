package io.github.dblock.console;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.function.Supplier;

import io.github.dblock.LockHandle;

/**
 * A lock held by a thread of its own, named as an application's would be (the test's own
 * thread is renamed by Selenium while it drives the browser), until {@link #end} or
 * {@link #close}.
 */
final class Holder implements AutoCloseable {

	private final CompletableFuture<LockHandle> acquired = new CompletableFuture<>();

	private final CompletableFuture<Consumer<LockHandle>> ending = new CompletableFuture<>();

	private final CompletableFuture<Void> ended = new CompletableFuture<>();

	/**
	 * Starts the thread, which acquires.
	 * @param threadName the thread's name
	 * @param acquisition what the thread calls to acquire
	 */
	Holder(String threadName, Supplier<LockHandle> acquisition) {
		Thread thread = new Thread(() -> {
			LockHandle handle;
			try {
				handle = acquisition.get();
				this.acquired.complete(handle);
			}
			catch (Throwable ex) {
				this.acquired.completeExceptionally(ex);
				this.ended.complete(null);
				return;
			}
			try {
				this.ending.join().accept(handle);
				this.ended.complete(null);
			}
			catch (Throwable ex) {
				this.ended.completeExceptionally(ex);
			}
		}, threadName);
		thread.setDaemon(true);
		thread.start();
	}

	/**
	 * The handle, once acquired.
	 * @return the handle
	 */
	LockHandle handle() throws Exception {
		return this.acquired.get(10, TimeUnit.SECONDS);
	}

	/**
	 * Ends the hold on the holder's thread and waits for it.
	 * @param step what the thread does with its handle (closes it)
	 * @return what the step threw, or {@code null}
	 */
	Throwable end(Consumer<LockHandle> step) throws InterruptedException, TimeoutException {
		this.ending.complete(step);
		try {
			this.ended.get(10, TimeUnit.SECONDS);
			return null;
		}
		catch (ExecutionException ex) {
			return ex.getCause();
		}
	}

	@Override
	public void close() throws Exception {
		if (!this.ending.isDone()) {
			Throwable failure = end(LockHandle::close);
			if (failure != null) {
				throw new IllegalStateException("The holder's release failed", failure);
			}
		}
	}

}
