package io.github.dblock.benchmarks;

import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.time.Duration;

/**
 * A warm-up that lasts until the JIT is quiet: windows of a given length until
 * {@value #QUIET_WINDOWS} in a row in each of which the JVM's compilers spent less than
 * {@value #QUIET_MILLIS} ms, within a cap. A contender measured while C2 still compiles its
 * path loses to a shorter path the CPU the compiler takes (on 2 cores and 16 threads,
 * db-lock's path compiled for about 15 s, taking half the machine's CPU meanwhile), which is
 * not what its cycle costs. Without a compilation bean (an interpreter-only JVM) one window
 * is the warm-up.
 */
final class JitWarmUp {

	/** A window in which the compilers spent less than this is quiet. */
	static final long QUIET_MILLIS = 20;

	/** Quiet windows in a row that end the warm-up. */
	static final int QUIET_WINDOWS = 2;

	private JitWarmUp() {
	}

	/** A measured run of the given length, and what it needs beforehand. */
	interface Window {

		/** Prepares window {@code index}; the compilers' time meanwhile does not count. */
		default void prepare(int index, Duration length) throws Exception {
		}

		void run(int index, Duration length) throws Exception;

	}

	/**
	 * Runs windows until {@value #QUIET_WINDOWS} in a row were quiet or the cap is reached (it
	 * is checked before each window, so the last one may end past it).
	 * @param window runs one window
	 * @param length each window's length
	 * @param most the cap on the whole warm-up
	 * @return how long the warm-up took
	 */
	static Duration run(Window window, Duration length, Duration most) throws Exception {
		CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
		boolean timed = jit != null && jit.isCompilationTimeMonitoringSupported();
		long start = System.nanoTime();
		int quiet = 0;
		for (int i = 0; System.nanoTime() - start < most.toNanos(); i++) {
			window.prepare(i, length);
			long compiled = timed ? jit.getTotalCompilationTime() : 0;
			window.run(i, length);
			if (!timed) {
				break;
			}
			quiet = (jit.getTotalCompilationTime() - compiled < QUIET_MILLIS) ? quiet + 1 : 0;
			if (quiet == QUIET_WINDOWS) {
				break;
			}
		}
		return Duration.ofNanos(System.nanoTime() - start);
	}

}
