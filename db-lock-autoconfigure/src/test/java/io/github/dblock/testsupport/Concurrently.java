package io.github.dblock.testsupport;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * Runs a task on several real threads released at once by a start gate, and rethrows the
 * first failure; on virtual threads with {@code -Ddblock.test.virtual-threads=true}.
 */
public final class Concurrently {

	/**
	 * Whether tasks run on virtual threads: set {@code -Ddblock.test.virtual-threads=true}
	 * on a JDK that has them (21 and later).
	 */
	public static final boolean VIRTUAL = Boolean.getBoolean("dblock.test.virtual-threads");

	private Concurrently() {
	}

	/** One virtual thread per task; looked up by name, as the code is compiled for Java 17. */
	private static ExecutorService virtualThreads() {
		try {
			return (ExecutorService) Executors.class.getMethod("newVirtualThreadPerTaskExecutor").invoke(null);
		}
		catch (ReflectiveOperationException ex) {
			throw new IllegalStateException("Virtual threads need Java 21 or later, this is "
					+ System.getProperty("java.version"), ex);
		}
	}

	/** A task given its thread's index. */
	@FunctionalInterface
	public interface Task {

		void run(int thread) throws Exception;

	}

	/**
	 * Runs {@code task} on {@code threads} threads and waits for all of them.
	 * @param threads the number of threads
	 * @param task the task
	 * @throws Exception the first failure of a thread
	 */
	public static void run(int threads, Task task) throws Exception {
		CountDownLatch start = new CountDownLatch(1);
		ExecutorService pool = VIRTUAL ? virtualThreads() : Executors.newFixedThreadPool(threads);
		try {
			List<Future<?>> futures = new ArrayList<>();
			for (int t = 0; t < threads; t++) {
				int thread = t;
				futures.add(pool.submit(() -> {
					start.await();
					task.run(thread);
					return null;
				}));
			}
			start.countDown();
			for (Future<?> future : futures) {
				future.get(5, TimeUnit.MINUTES);
			}
		}
		finally {
			pool.shutdownNow();
		}
	}

}
