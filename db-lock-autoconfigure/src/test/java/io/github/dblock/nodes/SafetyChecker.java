package io.github.dblock.nodes;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import io.github.dblock.testsupport.TestDatabase;
import org.assertj.core.api.SoftAssertions;

/**
 * The randomized safety checker: three node processes ({@link ChaosNode}) acquire, try,
 * re-enter, hold with renewal and hold fixed leases past their end on a handful of keys
 * for 20 s, each writing its history with the database's time; the histories together
 * must show no overlap of two valid holds, no token out of order and no refusal without a
 * holder.
 */
final class SafetyChecker {

	/** Time for the node JVMs to start and open their pools before the common start. */
	static final long START_MARGIN_MILLIS = 6000;

	private SafetyChecker() {
	}

	/**
	 * Runs three nodes on a database and checks their histories.
	 * @param connection the database the nodes use
	 * @param label what the printed summary calls it
	 * @param dir where the nodes write their histories
	 * @throws Exception if a node fails
	 */
	static void check(TestDatabase.Connection connection, String label, Path dir) throws Exception {
		int nodes = 3;
		long start = System.currentTimeMillis() + START_MARGIN_MILLIS;
		NodeSupport.run(nodes, ChaosNode.class, connection,
				(node) -> new Object[] { node, start, 20_000, dir.resolve("history-" + node + ".csv") });
		List<Hold> holds = new ArrayList<>();
		List<Span> refusals = new ArrayList<>();
		List<Span> timeouts = new ArrayList<>();
		for (int node = 0; node < nodes; node++) {
			for (String line : Files.readAllLines(dir.resolve("history-" + node + ".csv"), StandardCharsets.UTF_8)) {
				String[] f = line.split(",");
				switch (f[0]) {
					case "H" -> holds.add(new Hold(Integer.parseInt(f[1]), Integer.parseInt(f[2]), f[3], Long.parseLong(f[4]),
							Long.parseLong(f[5]), Long.parseLong(f[6]), Long.parseLong(f[7]), Long.parseLong(f[8]),
							Boolean.parseBoolean(f[9]), Boolean.parseBoolean(f[10]), Boolean.parseBoolean(f[11])));
					case "R" -> refusals.add(Span.of(f));
					default -> timeouts.add(Span.of(f));
				}
			}
		}
		// two valid holds of a key by different threads at once; a re-entry counts too, against other threads
		int overlaps = 0;
		// a fresh acquisition that ended before another began has the smaller token (a re-entry shares its
		// outer handle's token: it is told apart by that token being open on its thread, and left out)
		int tokensOutOfOrder = 0;
		Map<String, List<Hold>> byKey = holds.stream().collect(Collectors.groupingBy(Hold::key));
		for (List<Hold> ofKey : byKey.values()) {
			for (Hold first : ofKey) {
				for (Hold second : ofKey) {
					if (first.valid() && second.valid() && !first.sameThread(second)
							&& first.acquired() < second.acquired() && second.acquired() < first.beforeClose()) {
						overlaps++;
					}
					if (!first.reentry() && !second.reentry() && first.acquired() < second.before()
							&& first.token() >= second.token()) {
						tokensOutOfOrder++;
					}
				}
			}
		}
		int refusedWithoutHolder = 0;
		for (Span refusal : refusals) {
			boolean held = holds.stream()
				.anyMatch((hold) -> hold.key().equals(refusal.key()) && hold.before() <= refusal.after()
						&& hold.afterClose() >= refusal.before());
			// a thread of its own node waiting in the local queue refuses it too
			boolean queued = timeouts.stream()
				.anyMatch((wait) -> wait.node() == refusal.node() && wait.key().equals(refusal.key())
						&& wait.before() <= refusal.after() && wait.after() >= refusal.before());
			if (!held && !queued) {
				refusedWithoutHolder++;
			}
		}
		long stale = holds.stream().filter((hold) -> !hold.valid()).count();
		System.out.printf(
				"%s safety checker, %d nodes: %d holds (%d re-entries, %d not valid at close, %d lost), %d refusals, %d timeouts; "
						+ "overlaps %d, tokens out of order %d, refusals without a holder %d%n",
				label, nodes, holds.size(), holds.stream().filter(Hold::reentry).count(), stale,
				holds.stream().filter(Hold::lost).count(), refusals.size(),
				timeouts.size(), overlaps, tokensOutOfOrder, refusedWithoutHolder);
		int overlapsFound = overlaps;
		int tokensFound = tokensOutOfOrder;
		int refusalsFound = refusedWithoutHolder;
		SoftAssertions.assertSoftly((softly) -> {
			softly.assertThat(holds).hasSizeGreaterThan(100);
			softly.assertThat(stale).as("holds that slept past their fixed lease").isPositive();
			softly.assertThat(overlapsFound).as("overlaps").isZero();
			softly.assertThat(tokensFound).as("tokens out of order").isZero();
			softly.assertThat(refusalsFound).as("refusals without a holder").isZero();
		});
	}

	/** A hold in a node's history; times are the database's, in microseconds. */
	private record Hold(int node, int thread, String key, long token, long before, long acquired, long beforeClose,
			long afterClose, boolean valid, boolean reentry, boolean lost) {

		boolean sameThread(Hold other) {
			return this.node == other.node && this.thread == other.thread;
		}

	}

	/** A refused try or a wait that ran out. */
	private record Span(int node, int thread, String key, long before, long after) {

		static Span of(String[] f) {
			return new Span(Integer.parseInt(f[1]), Integer.parseInt(f[2]), f[3], Long.parseLong(f[4]), Long.parseLong(f[5]));
		}

	}

}
