package io.github.dblock.nodes;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import io.github.dblock.nodes.CampaignChecker.Written;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The fault campaign's checker finds each kind of violation in a history made to have it,
 * and none in the same history without it.
 */
class CampaignCheckerTests {

	private static final long WAIT_NANOS = 2_000_000_000L;

	@TempDir
	Path dir;

	@Test
	void holdsOneAfterAnotherAreClean() throws Exception {
		Map<String, Long> violations = check(List.of(hold(0, 1, "LEASE", "lease-0", 10, 100, 200, true),
				hold(1, 1, "LEASE", "lease-0", 11, 201, 300, true), hold(0, 2, "READ", "rw-0", 12, 100, 300, true),
				hold(1, 2, "READ", "rw-0", 13, 150, 250, true), acquisition(0, WAIT_NANOS)), List.of(), Map.of(), 0);
		assertThat(violations).allSatisfy((kind, found) -> assertThat(found).as(kind).isZero());
	}

	@Test
	void twoValidHoldsOfALeaseKeyAtOnceAreAnOverlap() throws Exception {
		assertThat(check(List.of(hold(0, 1, "LEASE", "lease-0", 10, 100, 200, true),
				hold(1, 1, "LEASE", "lease-0", 11, 150, 300, true)), List.of(), Map.of(), 0))
			.containsEntry("overlaps", 1L);
	}

	@Test
	void aReadDuringAWriteIsAnOverlap() throws Exception {
		assertThat(check(List.of(hold(0, 1, "WRITE", "rw-0", 10, 100, 200, true),
				hold(1, 1, "READ", "rw-0", 11, 150, 300, true)), List.of(), Map.of(), 0))
			.containsEntry("overlaps", 1L);
	}

	@Test
	void aHoldNotValidAtItsEndClaimsNothingButItsCommittedWrites() throws Exception {
		List<String> holds = List.of(hold(0, 1, "LEASE", "lease-0", 10, 100, 400, false),
				hold(1, 1, "LEASE", "lease-0", 11, 200, 300, true));
		assertThat(check(holds, List.of(), Map.of(), 0)).containsEntry("overlaps", 0L);
		// a write of the first that committed at 250 says the guard found it valid then
		Written late = new Written("lease-0", 0, 0, 1, 1, 10, 0, 0, 250);
		assertThat(check(holds, List.of(late), Map.of("lease-0", 1L), 0)).containsEntry("overlaps", 1L);
	}

	@Test
	void aHoldWhoseAcquisitionTimeWasNotReadStillClaimsItsValidEnd() throws Exception {
		// cut off after its acquisition: no time read then, its end a lower bound from the monotonic clock
		assertThat(check(List.of(hold(0, 1, "LEASE", "lease-0", 10, -1, 250, true),
				hold(1, 1, "LEASE", "lease-0", 11, 200, 300, true)), List.of(), Map.of(), 0))
			.containsEntry("overlaps", 1L);
	}

	@Test
	void moreHoldsOfTheSemaphoreThanPermitsAreAnOverlap() throws Exception {
		List<String> two = List.of(hold(0, 1, "SEMAPHORE", "sem-0#permit-0", 10, 100, 300, true),
				hold(1, 1, "SEMAPHORE", "sem-0#permit-1", 11, 150, 300, true));
		assertThat(check(two, List.of(), Map.of(), 0)).containsEntry("overlaps", 0L);
		List<String> three = new ArrayList<>(two);
		three.add(hold(2, 1, "SEMAPHORE", "sem-0#permit-2", 12, 200, 300, true));
		assertThat(check(three, List.of(), Map.of(), 0).get("overlaps")).isPositive();
		List<String> onePermitTwice = List.of(hold(0, 1, "SEMAPHORE", "sem-0#permit-0", 10, 100, 300, true),
				hold(1, 1, "SEMAPHORE", "sem-0#permit-0", 11, 150, 300, true));
		assertThat(check(onePermitTwice, List.of(), Map.of(), 0)).containsEntry("overlaps", 1L);
	}

	@Test
	void aLaterHoldWithASmallerTokenIsOutOfOrder() throws Exception {
		assertThat(check(List.of(hold(0, 1, "FAIR", "fair-0", 11, 100, 200, true),
				hold(1, 1, "FAIR", "fair-0", 10, 201, 300, true)), List.of(), Map.of(), 0))
			.containsEntry("tokens out of order", 1L);
	}

	@Test
	void aWriteAfterALargerTokensWriteIsStale() throws Exception {
		List<Written> writes = List.of(new Written("lease-0", 0, 0, 1, 1, 11, 0, 0, 100),
				new Written("lease-0", 1, 0, 1, 1, 10, 1, 11, 200));
		assertThat(check(List.of(), writes, Map.of("lease-0", 2L), 0)).containsEntry("stale writes", 1L);
	}

	@Test
	void anAcknowledgedWriteWithoutItsRowIsLostAndARefusedOneWithARowIsAPhantom() throws Exception {
		List<Written> one = List.of(new Written("lease-0", 0, 0, 1, 1, 10, 0, 0, 100));
		List<String> lines = List.of(write(0, 1, "ok"), write(0, 2, "ok"));
		assertThat(check(lines, one, Map.of("lease-0", 1L), 0)).containsEntry("lost writes", 1L);
		assertThat(check(List.of(write(0, 1, "refused")), one, Map.of("lease-0", 1L), 0))
			.containsEntry("phantom writes", 1L);
		assertThat(check(List.of(write(0, 1, "unknown")), one, Map.of("lease-0", 1L), 0))
			.containsEntry("phantom writes", 0L)
			.containsEntry("lost writes", 0L);
	}

	@Test
	void twoWritesThatReadTheSameValueLostAnUpdate() throws Exception {
		List<Written> writes = List.of(new Written("lease-0", 0, 0, 1, 1, 10, 0, 0, 100),
				new Written("lease-0", 1, 0, 1, 1, 11, 0, 0, 200));
		assertThat(check(List.of(), writes, Map.of("lease-0", 1L), 0).get("lost writes")).isPositive();
	}

	@Test
	void anAcquisitionPastItsBoundIsLateUnlessTheProcessWasPaused() throws Exception {
		long bound = WAIT_NANOS + TimeUnit.MILLISECONDS.toNanos(
				CampaignNode.STATEMENT_TIMEOUT.toMillis() + CampaignNode.VALIDATION_TIMEOUT.toMillis() + CampaignChecker.SLACK_MILLIS);
		assertThat(check(List.of(acquisition(0, bound + 1_000_000)), List.of(), Map.of(), 0))
			.containsEntry("late returns", 1L);
		assertThat(check(List.of(acquisition(0, bound + 1_000_000), "P,0,1500,2000"), List.of(), Map.of(), 0))
			.containsEntry("late returns", 0L);
	}

	@Test
	void twoTermsLeadingAtOnceOverlap() throws Exception {
		assertThat(check(List.of("L,0,5,100", "L,0,5,200", "L,1,6,300"), List.of(), Map.of(), 0))
			.containsEntry("leader overlaps", 0L);
		assertThat(check(List.of("L,0,5,100", "L,0,5,300", "L,1,6,200"), List.of(), Map.of(), 0))
			.containsEntry("leader overlaps", 1L);
		assertThat(check(List.of("L,0,6,100", "L,1,5,200"), List.of(), Map.of(), 0))
			.containsEntry("leader terms out of order", 1L);
	}

	@Test
	void aValidRowAfterTheRunIsLeftBehind() throws Exception {
		assertThat(check(List.of(), List.of(), Map.of(), 2)).containsEntry("rows left", 2L);
	}

	private Map<String, Long> check(List<String> lines, List<Written> written, Map<String, Long> registers,
			long rowsLeft) throws Exception {
		Path history = this.dir.resolve("history-" + System.nanoTime() + ".csv");
		Files.write(history, lines);
		return new CampaignChecker().check(List.of(history), written, registers, rowsLeft).violations();
	}

	/** A hold of node {@code node} (its thread 0) from {@code acquired} to {@code end}. */
	private static String hold(int node, long hold, String mode, String permitKey, long token, long acquired, long end,
			boolean valid) {
		String key = permitKey.contains("#") ? permitKey.substring(0, permitKey.indexOf('#')) : permitKey;
		return String.join(",", "H", String.valueOf(node), "0", String.valueOf(hold), mode, key, permitKey,
				String.valueOf(token), String.valueOf(acquired), String.valueOf(end), String.valueOf(valid), "false");
	}

	private static String write(int node, long seq, String outcome) {
		return String.join(",", "W", String.valueOf(node), "0", "1", String.valueOf(seq), outcome);
	}

	/** An acquisition with a 2 s wait that started at 1000 ns and took {@code elapsed}. */
	private static String acquisition(int node, long elapsed) {
		return String.join(",", "A", String.valueOf(node), "0", "LEASE", "lease-0", "2000", "1000",
				String.valueOf(elapsed), "ok");
	}

}
