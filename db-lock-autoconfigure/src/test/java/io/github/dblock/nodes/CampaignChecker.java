package io.github.dblock.nodes;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import io.github.dblock.DbLockMode;

/**
 * The one checker over a fault campaign's whole history: the nodes' history files
 * ({@link CampaignNode}) and the register writes that committed (read from the database
 * once every node has stopped). Counts each kind of violation; every count must be 0:
 * <ul>
 * <li>{@code overlaps}: two holds of a key valid at once by the database's clock (a read and
 * a write, two writes, two holds of a lease or fair key, more holds of the semaphore than
 * permits, or of one permit). A hold is valid from the time read after its acquisition to
 * the time read before {@code isHeld()} said {@code true}, and to the time read inside each
 * of its register writes that committed (its commit guard found the lease valid after it).
 * A hold whose lease was not valid at its end and that committed nothing claims nothing.</li>
 * <li>{@code tokens}: of two exclusive holds of a key (or permit) one valid entirely before
 * the other, the earlier with the larger token; of two leader terms, likewise.</li>
 * <li>{@code stale writes}: a register write that committed after a write of a larger token
 * (each write read the register {@code FOR UPDATE}, so their order is the database's).</li>
 * <li>{@code lost writes}: an acknowledged write ({@code ok}) without its row, or a register
 * whose value is not its number of rows; {@code phantom writes}: a row of a write that failed
 * before its commit or was refused by the guard.</li>
 * <li>{@code late returns}: an acquisition that returned later than its wait plus the
 * documented bound (statement timeout + pool validation timeout + scheduling slack), leaving
 * out those during which the process did not run (paused), and those of a process whose
 * clocks libfaketime shifts (its waits are not measured in real time).</li>
 * <li>{@code leader overlaps}: two terms whose leaders said they led at once.</li>
 * <li>{@code rows left}: a lock row still valid once every node has stopped.</li>
 * </ul>
 */
final class CampaignChecker {

	/** Scheduling slack in the documented bound of an acquisition, on a loaded machine. */
	static final long SLACK_MILLIS = 1000;

	private final Map<String, Long> violations = new LinkedHashMap<>();

	private final Map<String, Long> counts = new LinkedHashMap<>();

	private long longestPastBoundMillis = Long.MIN_VALUE;

	/** What each violation of the holds was: the two holds, for the campaign's log. */
	private final List<String> findings = new ArrayList<>();

	/** A committed register write, as its row says. */
	record Written(String key, int node, int thread, long seq, long hold, long token, long readValue, long readToken,
			long atMicros) {
	}

	/**
	 * Checks the histories.
	 * @param histories the nodes' history files
	 * @param written the committed register writes
	 * @param registers each register's final value
	 * @param rowsLeft the lock rows still valid after the run
	 * @return this, with the counts
	 */
	CampaignChecker check(List<Path> histories, List<Written> written, Map<String, Long> registers, long rowsLeft)
			throws Exception {
		List<String[]> lines = new ArrayList<>();
		for (Path history : histories) {
			for (String line : Files.readAllLines(history, StandardCharsets.UTF_8)) {
				lines.add(line.split(","));
			}
		}
		Map<String, List<Written>> writesOfHold = written.stream()
			.collect(Collectors.groupingBy((w) -> w.node() + "/" + w.thread() + "/" + w.hold()));
		List<Interval> holds = new ArrayList<>();
		Map<Integer, List<long[]>> pauses = new HashMap<>();
		Map<Long, long[]> terms = new TreeMap<>();
		Map<String, String> writeOutcomes = new HashMap<>();
		List<String[]> acquisitions = new ArrayList<>();
		Set<Integer> shifted = new HashSet<>();
		for (String[] f : lines) {
			switch (f[0]) {
				case "H" -> {
					count("holds");
					Interval hold = Interval.of(f, writesOfHold.getOrDefault(f[1] + "/" + f[2] + "/" + f[3], List.of()));
					if (hold != null) {
						holds.add(hold);
					}
					if ("false".equals(f[10])) {
						count("holds not valid at their end");
					}
					if ("true".equals(f[11])) {
						count("holds reported lost");
					}
				}
				case "W" -> {
					count("writes " + f[5]);
					writeOutcomes.put(f[1] + "/" + f[2] + "/" + f[4], f[5]);
				}
				case "A" -> {
					count("acquisitions " + (f[8].equals("ok") || f[8].equals("refused") ? f[8] : "failed"));
					acquisitions.add(f);
				}
				case "L" -> {
					long micros = Long.parseLong(f[3]);
					terms.merge(Long.parseLong(f[2]), new long[] { micros, micros },
							(a, b) -> new long[] { Math.min(a[0], b[0]), Math.max(a[1], b[1]) });
				}
				case "S" -> shifted.add(Integer.parseInt(f[1]));
				case "P" -> pauses.computeIfAbsent(Integer.parseInt(f[1]), (node) -> new ArrayList<>())
					.add(new long[] { Long.parseLong(f[2]), Long.parseLong(f[3]) });
				default -> throw new IllegalStateException("unknown history line " + String.join(",", f));
			}
		}
		checkHolds(holds);
		checkRegisters(written, registers, writeOutcomes);
		checkWaits(acquisitions, pauses, shifted);
		checkTerms(terms);
		this.counts.put("leader terms", (long) terms.size());
		this.violations.put("rows left", rowsLeft);
		return this;
	}

	Map<String, Long> violations() {
		return this.violations;
	}

	Map<String, Long> counts() {
		return this.counts;
	}

	/** The most an acquisition returned past its bound, in milliseconds (negative: all within). */
	long longestPastBoundMillis() {
		return this.longestPastBoundMillis;
	}

	/** The holds each violation of {@code overlaps} and {@code tokens out of order} was about. */
	List<String> findings() {
		return this.findings;
	}

	private void finding(String kind, Interval first, Interval second) {
		this.findings.add(kind + ": " + first + " and " + second);
	}

	private void count(String name) {
		this.counts.merge(name, 1L, Long::sum);
	}

	private void violation(String name, long found) {
		this.violations.merge(name, found, Long::sum);
	}

	private void checkHolds(List<Interval> holds) {
		long overlaps = 0;
		long tokens = 0;
		Map<String, List<Interval>> byKey = holds.stream().collect(Collectors.groupingBy(Interval::key));
		for (List<Interval> ofKey : byKey.values()) {
			ofKey.sort(Comparator.comparingLong(Interval::start));
			for (int i = 0; i < ofKey.size(); i++) {
				Interval first = ofKey.get(i);
				int covering = 1;
				for (int j = 0; j < ofKey.size(); j++) {
					Interval second = ofKey.get(j);
					if (i == j) {
						continue;
					}
					boolean together = first.start() < second.end() && second.start() < first.end();
					if (together && second.start() <= first.start()) {
						covering++;
					}
					if (together && j > i && first.conflicts(second)) {
						overlaps++;
						finding("overlap", first, second);
					}
					if (first.exclusive() && second.exclusive() && first.permitKey().equals(second.permitKey())
							&& first.end() < second.start() && first.token() >= second.token()) {
						tokens++;
						finding("tokens out of order", first, second);
					}
				}
				if (first.mode() == DbLockMode.SEMAPHORE && covering > CampaignNode.PERMITS) {
					overlaps++;
				}
			}
		}
		this.counts.put("holds checked", (long) holds.size());
		violation("overlaps", overlaps);
		violation("tokens out of order", tokens);
	}

	private void checkRegisters(List<Written> written, Map<String, Long> registers, Map<String, String> outcomes) {
		long stale = 0;
		long lost = 0;
		long phantom = 0;
		Map<String, List<Written>> byKey = written.stream().collect(Collectors.groupingBy(Written::key));
		for (Map.Entry<String, Long> register : registers.entrySet()) {
			List<Written> rows = new ArrayList<>(byKey.getOrDefault(register.getKey(), List.of()));
			rows.sort(Comparator.comparingLong(Written::readValue));
			for (int i = 0; i < rows.size(); i++) {
				if (rows.get(i).readValue() != i) {
					lost++;
				}
				if (rows.get(i).token() < rows.get(i).readToken()) {
					stale++;
				}
			}
			if (register.getValue() != rows.size()) {
				lost++;
			}
		}
		Set<String> present = written.stream()
			.map((w) -> w.node() + "/" + w.thread() + "/" + w.seq())
			.collect(Collectors.toSet());
		for (Map.Entry<String, String> outcome : outcomes.entrySet()) {
			boolean there = present.contains(outcome.getKey());
			if (outcome.getValue().equals("ok") && !there) {
				lost++;
			}
			if ((outcome.getValue().equals("refused") || outcome.getValue().equals("aborted")) && there) {
				phantom++;
			}
		}
		this.counts.put("register writes committed", (long) written.size());
		violation("stale writes", stale);
		violation("lost writes", lost);
		violation("phantom writes", phantom);
	}

	private void checkWaits(List<String[]> acquisitions, Map<Integer, List<long[]>> pauses, Set<Integer> shifted) {
		long boundNanos = TimeUnit.MILLISECONDS.toNanos(CampaignNode.STATEMENT_TIMEOUT.toMillis()
				+ CampaignNode.VALIDATION_TIMEOUT.toMillis() + SLACK_MILLIS);
		long late = 0;
		for (String[] f : acquisitions) {
			if (shifted.contains(Integer.parseInt(f[1]))) {
				count("acquisitions on a shifted clock");
				continue;
			}
			long start = Long.parseLong(f[6]);
			long elapsed = Long.parseLong(f[7]);
			long end = start + elapsed;
			boolean paused = pauses.getOrDefault(Integer.parseInt(f[1]), List.of())
				.stream()
				.anyMatch((p) -> p[0] < end && start < p[1]);
			if (paused) {
				count("acquisitions during a pause");
				continue;
			}
			long past = elapsed - TimeUnit.MILLISECONDS.toNanos(Long.parseLong(f[5])) - boundNanos;
			this.longestPastBoundMillis = Math.max(this.longestPastBoundMillis, TimeUnit.NANOSECONDS.toMillis(past));
			if (past > 0) {
				late++;
			}
		}
		violation("late returns", late);
	}

	private void checkTerms(Map<Long, long[]> terms) {
		long overlaps = 0;
		long order = 0;
		List<Map.Entry<Long, long[]>> all = new ArrayList<>(terms.entrySet());
		for (Map.Entry<Long, long[]> a : all) {
			for (Map.Entry<Long, long[]> b : all) {
				if (a.getKey() < b.getKey()) {
					if (a.getValue()[0] <= b.getValue()[1] && b.getValue()[0] <= a.getValue()[1]) {
						overlaps++;
					}
					else if (b.getValue()[1] < a.getValue()[0]) {
						order++;
					}
				}
			}
		}
		violation("leader overlaps", overlaps);
		violation("leader terms out of order", order);
	}

	/** A hold's valid span by the database's clock, in microseconds. */
	private record Interval(int node, int thread, long hold, DbLockMode mode, String key, String permitKey, long token,
			long start, long end) {

		/**
		 * The span a hold line and its committed writes claim, or {@code null} if they claim
		 * none (times not read, or not valid at its end and nothing committed).
		 */
		static Interval of(String[] f, List<Written> writes) {
			long acquired = Long.parseLong(f[8]);
			long end = Long.parseLong(f[9]);
			boolean valid = Boolean.parseBoolean(f[10]);
			long start = Long.MAX_VALUE;
			long last = Long.MIN_VALUE;
			if (valid && end > 0) {
				// valid at its end, so since its acquisition; with no time read then, from its end on
				start = (acquired > 0) ? acquired : end;
				last = end;
			}
			for (Written write : writes) {
				start = Math.min(start, (acquired > 0) ? Math.min(acquired, write.atMicros()) : write.atMicros());
				last = Math.max(last, write.atMicros());
			}
			if (start == Long.MAX_VALUE) {
				return null;
			}
			return new Interval(Integer.parseInt(f[1]), Integer.parseInt(f[2]), Long.parseLong(f[3]),
					DbLockMode.valueOf(f[4]), f[5], f[6], Long.parseLong(f[7]), start, last);
		}

		boolean exclusive() {
			return this.mode != DbLockMode.READ;
		}

		/** Whether the two may not be valid at once: not two reads, not two permits of the semaphore's. */
		boolean conflicts(Interval other) {
			if (this.mode == DbLockMode.READ && other.mode == DbLockMode.READ) {
				return false;
			}
			if (this.mode == DbLockMode.SEMAPHORE) {
				return this.permitKey.equals(other.permitKey);
			}
			return true;
		}

	}

}
