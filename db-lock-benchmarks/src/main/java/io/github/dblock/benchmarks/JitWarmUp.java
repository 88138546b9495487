package io.github.dblock.benchmarks;

import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.time.Duration;

/**
 * A warm-up that lasts until the JIT is quiet: windows of a given length until one in which
 * the JVM's compilers spent less than {@value #QUIET_MILLIS} ms, within a cap. A contender
 * measured while C2 still compiles its path loses to a shorter path the CPU the compiler
 * takes (on 2 cores and 16 threads, db-lock's path compiled for about 15 s, taking half the
 * machine's CPU meanwhile), which is not what its cycle costs.
 */
final class JitWarmUp {

	/** A window in which the compilers spent less than this is quiet. */
	static final long QUIET_MILLIS = 20;

	private JitWarmUp() {
	}

	/** A measured run of the given length. */
	@FunctionalInterface
	interface Window {

		void run(int index, Duration length) throws Exception;

	}

	/**
	 * Runs windows until one was quiet or the cap is reached.
	 * @param window runs one window
	 * @param length each window's length
	 * @param most the cap on the whole warm-up
	 * @return how long the warm-up took
	 */
	static Duration run(Window window, Duration length, Duration most) throws Exception {
		CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
		long start = System.nanoTime();
		for (int i = 0; System.nanoTime() - start < most.toNanos(); i++) {
			long compiled = jit.getTotalCompilationTime();
			window.run(i, length);
			if (jit.getTotalCompilationTime() - compiled < QUIET_MILLIS) {
				break;
			}
		}
		return Duration.ofNanos(System.nanoTime() - start);
	}

}
