package io.github.dblock.benchmarks;

import org.jspecify.annotations.Nullable;

/**
 * One target of the issue, or an informative comparison, with what this run measured.
 *
 * @param target what is compared
 * @param measured the measured value, with the numbers behind a ratio
 * @param required the target; empty for information only
 * @param pass whether met; {@code null} for information only
 */
record TargetCheck(String target, String measured, String required, @Nullable Boolean pass) {

	String result() {
		return (this.pass == null) ? "info" : this.pass ? "PASS" : "MISS";
	}

}
