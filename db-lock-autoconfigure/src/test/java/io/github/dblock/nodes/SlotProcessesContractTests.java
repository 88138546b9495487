package io.github.dblock.nodes;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import com.zaxxer.hikari.HikariDataSource;
import io.github.dblock.testsupport.TestDatabase;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Scheduled jobs once per slot across real processes whose clocks disagree: three nodes
 * ({@link SlotNode}), each a Spring Boot application with a {@code ThreadPoolTaskScheduler},
 * their clocks shifted by libfaketime ({@code faketime}) by -0.8 s, 0 and +0.8 s (up to 40%
 * of the 2 s period, under the half-period bound), fire each task over 24 nominal times, of
 * which at least 20 must be fired by all three (the rest leave room for a slow start). Each
 * fire is counted under its nominal time by its node's clock: a nominal time run by more than
 * one node is a double. With {@code @OncePerSlot} (cron and fixed rate): no double. With
 * ShedLock on the database's time, lockAtLeastFor 0.5 s, shorter than the skew (the
 * {@code shedlock} task): doubles, which shows the count finds them.
 */
abstract class SlotProcessesContractTests {

	private static final long PERIOD_MILLIS = 2000;

	/** The nominal times the nodes report: the ones all three fired must be at least {@link #SLOTS}. */
	private static final int WINDOW = 24;

	private static final int SLOTS = 20;

	private static final String[] SKEWS = { "-0.8", "+0", "+0.8" };

	protected abstract TestDatabase database();

	@Test
	void threeNodesWithClocksUpToFortyPercentOfAPeriodApartRunEachSlotAtMostOnce() throws Exception {
		String library = NodeSupport.libfaketime();
		Assumptions.assumeTrue(library != null, "libfaketime is not installed (apt-get install faketime): the nodes' "
				+ "clocks cannot be shifted");
		try (HikariDataSource dataSource = database().dataSource(2)) {
			JdbcTemplate jdbc = new JdbcTemplate(dataSource);
			jdbc.update("DELETE FROM " + TestDatabase.TABLE + "_slot");
			String time = (database() == TestDatabase.POSTGRESQL) ? "TIMESTAMP" : "TIMESTAMP(3)";
			jdbc.execute("CREATE TABLE IF NOT EXISTS " + SlotNode.SHEDLOCK_TABLE + " (name VARCHAR(64) NOT NULL, lock_until "
					+ time + " NOT NULL, locked_at " + time + " NOT NULL, locked_by VARCHAR(255) NOT NULL, PRIMARY KEY (name))");
			jdbc.update("DELETE FROM " + SlotNode.SHEDLOCK_TABLE);
			// past the nodes' start-up, at a multiple of the period
			long start = Math.floorDiv(System.currentTimeMillis() + 20_000, PERIOD_MILLIS) * PERIOD_MILLIS;
			long end = start + WINDOW * PERIOD_MILLIS;
			List<NodeSupport.Node> nodes = new ArrayList<>();
			List<String> outputs = new ArrayList<>();
			try {
				for (String skew : SKEWS) {
					nodes.add(NodeSupport.start(SlotNode.class, database().connection(),
							// the monotonic clock shifted too: with it left alone, the JVM's timed waits never ended
							Map.of("LD_PRELOAD", library, "FAKETIME", skew, "JAVA_TOOL_OPTIONS", NodeSupport.FAKETIME_JVM_OPTIONS),
							PERIOD_MILLIS, start, end));
				}
				for (NodeSupport.Node node : nodes) {
					outputs.add(NodeSupport.finish(node));
				}
			}
			finally {
				nodes.forEach((node) -> node.process().destroyForcibly());
			}
			for (int i = 0; i < SKEWS.length; i++) {
				Files.writeString(Path.of("target", "slot-node-" + database().name().toLowerCase(java.util.Locale.ROOT) + "-"
						+ i + ".log"), outputs.get(i));
				long offset = Long.parseLong(NodeSupport.values(outputs.get(i)).get("clockOffsetMillis"));
				System.out.println("slot node " + i + ": FAKETIME=" + SKEWS[i] + ", clock minus the database's: " + offset
						+ " ms");
				// faketime did shift the JVM's clock
				assertThat(offset).as("node %d's clock offset with FAKETIME=%s", i, SKEWS[i])
					.isBetween((long) (Double.parseDouble(SKEWS[i]) * 1000) - 200,
							(long) (Double.parseDouble(SKEWS[i]) * 1000) + 200);
			}
			Map<String, Tally> tallies = new TreeMap<>();
			for (String output : outputs) {
				for (String line : output.split("\n")) {
					if (line.startsWith("fire:")) {
						String[] parts = line.strip().split(":");
						tallies.computeIfAbsent(parts[1], (task) -> new Tally(SKEWS.length))
							.add(Long.parseLong(parts[2]), Integer.parseInt(parts[3]));
					}
				}
			}
			for (Map.Entry<String, Tally> task : tallies.entrySet()) {
				Tally tally = task.getValue();
				System.out.println("slots on " + database() + ", task " + task.getKey() + ": " + tally.slots()
						+ " nominal times, " + tally.fires() + " fires, " + tally.runs() + " runs, doubles "
						+ tally.doubles() + ", not run " + tally.notRun());
			}
			for (String task : List.of("cron", "rate")) {
				Tally tally = tallies.get(task);
				// every node fired each nominal time counted: the skews were applied, not dodged
				assertThat(tally.slots()).as(task).isGreaterThanOrEqualTo(SLOTS);
				assertThat(tally.fires()).as(task).isEqualTo(tally.slots() * SKEWS.length);
				assertThat(tally.doubles()).as(task).isZero();
				assertThat(tally.notRun()).as(task).isZero();
				assertThat(jdbc.queryForObject("SELECT COUNT(*) FROM " + TestDatabase.TABLE + "_slot WHERE task = ?",
						Integer.class, task)).as(task).isGreaterThanOrEqualTo(tally.runs());
			}
			// ShedLock's lock ends before the last node's fire: slots run twice
			assertThat(tallies.get("shedlock").doubles()).isPositive();
		}
	}

	/**
	 * The fires and runs of one task, by nominal time, counting only the nominal times every
	 * node fired (a node still starting, or ending, misses some at the window's edges).
	 */
	private static final class Tally {

		private final Map<Long, int[]> all = new TreeMap<>();

		private final Map<Long, int[]> byNominal = new TreeMap<>();

		private final int nodes;

		Tally(int nodes) {
			this.nodes = nodes;
		}

		void add(long nominal, int ran) {
			int[] counts = this.all.computeIfAbsent(nominal, (key) -> new int[2]);
			counts[0]++;
			counts[1] += ran;
			if (counts[0] == this.nodes) {
				this.byNominal.put(nominal, counts);
			}
		}

		int slots() {
			return this.byNominal.size();
		}

		int fires() {
			return this.byNominal.values().stream().mapToInt((counts) -> counts[0]).sum();
		}

		int runs() {
			return this.byNominal.values().stream().mapToInt((counts) -> counts[1]).sum();
		}

		long doubles() {
			return this.byNominal.values().stream().filter((counts) -> counts[1] > 1).count();
		}

		long notRun() {
			return this.byNominal.values().stream().filter((counts) -> counts[1] == 0).count();
		}

	}

}
