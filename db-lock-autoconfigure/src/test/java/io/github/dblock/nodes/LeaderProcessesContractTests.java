package io.github.dblock.nodes;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.function.ToLongFunction;
import java.util.stream.Collectors;

import com.zaxxer.hikari.HikariDataSource;
import io.github.dblock.engine.LockEngine;
import io.github.dblock.jdbc.dialect.SqlDialect;
import io.github.dblock.leader.DbLockLeaders;
import io.github.dblock.testsupport.TestDatabase;
import org.assertj.core.api.SoftAssertions;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The leader election between three candidates that are separate JVM processes
 * ({@link LeaderNode}) on one database, one role, for {@code -Ddblock.test.leader-millis}
 * (20 s by default; three rounds at least), while the leader is, in turn, killed with
 * SIGKILL, stopped gracefully ({@link DbLockLeaders#stop()}) and cut off the database (its
 * traffic stalled by a proxy until another candidate has taken the role, then resumed); a
 * killed or stopped candidate is replaced by a new process, so that three candidates run
 * most of the time.
 * <p>
 * Each candidate prints its granted and revoked events with the database's time, read in the
 * listener on a connection of its own, straight to the database: after the grant, and before
 * the revocation returns, so before the lease is released. The interval between them holds
 * every instant the process said it leads after its granted event was recorded (what it said
 * between its grant and that record, one database round trip, is not checked). A killed
 * leader's interval ends when the test, once the process is gone, reads the database's time:
 * an end that holds whether or not the process would have stepped down in time; the next
 * grant is checked not to come before the dead lease's end as the database has it.
 * <p>
 * No two intervals of different processes may overlap; the terms, in the order of the
 * grants, must strictly increase; every grant has its revocation (but a killed leader's); at
 * each granted and revoked event the database has the term's lease, valid by its clock (read
 * in the listener, after the time): a leader says it leads only while its lease holds in the
 * database, whether or not another candidate happens to take over at that moment; a leader
 * cut off revokes ({@code LOST}) before another takes over; each fault is followed by
 * a takeover, whose time is printed (no bound is asserted). The candidates also ask
 * {@link DbLockLeaders#isLeader(String) isLeader} every 20 ms: the runs of yes of different
 * processes must not overlap on the machine's monotonic clock, and none may last past its
 * term's revocation.
 */
abstract class LeaderProcessesContractTests {

	/** How long the faults go on, set with {@code -Ddblock.test.leader-millis}. */
	private static final long RUN_MILLIS = Long.getLong("dblock.test.leader-millis", 20_000);

	private static final String ROLE = "processes";

	/** The role's key in the lock table: the nodes' template has no key prefix. */
	private static final String KEY = DbLockLeaders.KEY_PREFIX + ROLE;

	private static final int CANDIDATES = 3;

	private static final Duration LEASE = Duration.ofSeconds(2);

	private static final Duration POLL = Duration.ofMillis(150);

	private static final Duration SAMPLE = Duration.ofMillis(20);

	/** The fewest rounds of the three faults, however slow the machine: 3 kills, 3 stops, 3 stalls. */
	private static final int ROUNDS = 3;

	/** How long a new leader leads before the next fault: a renewal of its lease at least. */
	private static final long SETTLE_MILLIS = 1000;

	/** The longest any awaited line may take: a liveness bound, far above every expected time. */
	private static final Duration AWAIT = Duration.ofSeconds(30);

	private static final List<String> KINDS = List.of("READY", "G", "R", "S+", "S-", "STALLED", "RESUMED", "STOPPING",
			"STOPPED", "SAMPLES", "ERR");

	protected abstract TestDatabase database();

	@Test
	void threeProcessesNeverLeadAtOnceWhileLeadersAreKilledStoppedAndCutOffAndTermsIncrease() throws Exception {
		try (HikariDataSource dataSource = database().dataSource(2)) {
			JdbcTemplate jdbc = new JdbcTemplate(dataSource);
			SqlDialect dialect = database().dialect(dataSource);
			Election election = new Election(database().connection());
			List<Failover> kills = new ArrayList<>();
			List<Failover> stops = new ArrayList<>();
			List<Failover> stalls = new ArrayList<>();
			long started = System.nanoTime();
			AssertionError failed = null;
			try {
				for (int i = 0; i < CANDIDATES; i++) {
					election.awaitReady(election.start());
				}
				long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(RUN_MILLIS);
				for (int fault = 0; System.nanoTime() - end < 0 || fault < 3 * ROUNDS; fault++) {
					election.awaitLeader();
					// a pause between faults: the leader leads a while, its lease renewed
					Thread.sleep(SETTLE_MILLIS);
					Candidate leader = election.awaitLeader();
					switch (fault % 3) {
						case 0 -> kills.add(killLeader(election, leader, jdbc, dialect));
						case 1 -> stops.add(stop(election, leader));
						default -> stalls.add(stall(election, leader));
					}
					if (election.running().size() < CANDIDATES) {
						election.awaitReady(election.start());
					}
				}
				for (Candidate candidate : election.running()) {
					candidate.send("stop");
				}
				for (Candidate candidate : election.running()) {
					NodeSupport.finish(candidate.node);
					candidate.fate = Fate.ENDED;
				}
			}
			catch (AssertionError ex) {
				// no takeover, say: the processes still running are killed, and what they did is checked all the same
				failed = ex;
				for (Candidate candidate : election.running()) {
					kill(election, candidate, jdbc, dialect);
				}
			}
			finally {
				election.destroyAll();
			}
			check(election, kills, stops, stalls, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started));
			if (failed != null) {
				throw failed;
			}
		}
	}

	/** Kills the leader with SIGKILL; its leadership ends, at the latest, once the process is gone. */
	private static Failover killLeader(Election election, Candidate leader, JdbcTemplate jdbc, SqlDialect dialect)
			throws Exception {
		long term = kill(election, leader, jdbc, dialect);
		// the dead lease's end, as the database has it now that nobody renews it (unless already taken)
		Long deadEnd = deadLeaseEnd(jdbc, term);
		Grant next = election.awaitTakeover(term, leader, "after killing process " + leader.number);
		return new Failover(leader.number, term, next, leader.killedMicros, deadEnd, "SIGKILL", -1);
	}

	/** Kills a process with SIGKILL, reads every line it printed and returns its last term. */
	private static long kill(Election election, Candidate leader, JdbcTemplate jdbc, SqlDialect dialect)
			throws Exception {
		assertThat(leader.node.process().destroyForcibly().waitFor(AWAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
		long killedNanos = System.nanoTime();
		long killedMicros = NodeSupport.databaseMicros(jdbc, dialect);
		// every line it printed, read
		leader.node.output().get(AWAIT.toSeconds(), TimeUnit.SECONDS);
		long term;
		synchronized (election.monitor) {
			leader.fate = Fate.KILLED;
			leader.killedMicros = killedMicros;
			leader.killedNanos = killedNanos;
			term = leader.lastTerm();
		}
		return term;
	}

	/** The end of the lease of a term if the role's row is still that lease, in the database's time; else null. */
	private static @Nullable Long deadLeaseEnd(JdbcTemplate jdbc, long term) {
		return jdbc
			.query("SELECT token, expires_at FROM " + TestDatabase.TABLE + " WHERE lock_key = ?",
					(row, n) -> (LockEngine.firstFencingToken(row.getLong("token")) == term)
							? SemaphoreHolderNode.micros(row.getTimestamp("expires_at")) : null,
					KEY)
			.stream()
			.filter((at) -> at != null)
			.findFirst()
			.orElse(null);
	}

	/** Stops the leader's election gracefully: it revokes, releases, and the process ends. */
	private static Failover stop(Election election, Candidate leader) throws Exception {
		long term;
		synchronized (election.monitor) {
			term = leader.lastTerm();
		}
		leader.send("stop");
		String[] revoked = election.await("the revocation of term " + term + " on stopping process " + leader.number,
				() -> leader.revocation(term));
		NodeSupport.finish(leader.node);
		leader.fate = Fate.STOPPED;
		Grant next = election.awaitTakeover(term, leader, "after stopping process " + leader.number);
		return new Failover(leader.number, term, next, Long.parseLong(revoked[3]), null, revoked[2], -1);
	}

	/**
	 * Cuts the leader off the database (its traffic stalled) until another candidate has
	 * taken the role, then lets its traffic flow again; it stays a candidate.
	 */
	private static Failover stall(Election election, Candidate leader) throws Exception {
		long term;
		int stalled;
		synchronized (election.monitor) {
			term = leader.lastTerm();
			stalled = leader.all("STALLED").size();
		}
		leader.send("stall");
		String[] stall = election.await("process " + leader.number + " stalled",
				() -> (leader.all("STALLED").size() > stalled) ? leader.all("STALLED").get(stalled) : null);
		Grant next = election.awaitTakeover(term, leader, "after stalling process " + leader.number);
		// its revocation, printed before the takeover if it stepped down in time (the lines of two processes
		// come in any order): the database's times tell
		String[] revoked = election.awaitOrNull(LEASE.multipliedBy(2), () -> leader.revocation(term));
		int resumed;
		synchronized (election.monitor) {
			resumed = leader.all("RESUMED").size();
		}
		leader.send("resume");
		election.await("process " + leader.number + " resumed",
				() -> (leader.all("RESUMED").size() > resumed) ? true : null);
		String how = (revoked == null) ? "not revoked"
				: (Long.parseLong(revoked[3]) < next.micros()) ? revoked[2] : revoked[2] + " after the takeover";
		return new Failover(leader.number, term, next, (revoked != null) ? Long.parseLong(revoked[3]) : -1, null, how,
				Long.parseLong(stall[1]));
	}

	private void check(Election election, List<Failover> kills, List<Failover> stops, List<Failover> stalls,
			long tookMillis) {
		synchronized (election.monitor) {
			try {
				check(election.candidates, kills, stops, stalls, tookMillis);
			}
			catch (AssertionError ex) {
				System.out.println(database() + " leader election failed; the processes printed:\n" + election.printed());
				throw ex;
			}
		}
	}

	private void check(List<Candidate> candidates, List<Failover> kills, List<Failover> stops, List<Failover> stalls,
			long tookMillis) {
		List<String> protocol = new ArrayList<>();
		List<String> errors = new ArrayList<>();
		List<Interval> intervals = new ArrayList<>();
		List<Run> runs = new ArrayList<>();
		List<Grant> grants = new ArrayList<>();
		// a granted or revoked event at which the database did not have the term's lease, valid
		List<String> leasesNotHeld = new ArrayList<>();
		long samples = 0;
		long yes = 0;
		for (Candidate candidate : candidates) {
			String[] open = null;
			String[] openRun = null;
			for (String[] line : candidate.lines) {
				switch (line[0]) {
					case "G" -> {
						if (open != null) {
							protocol.add("process " + candidate.number + " granted term " + line[1] + " while leading term "
									+ open[1]);
						}
						open = line;
						if (!"held".equals(line[4])) {
							leasesNotHeld.add("process " + candidate.number + " granted term " + line[1] + ": " + line[4]);
						}
						grants.add(new Grant(candidate.number, Long.parseLong(line[1]), Long.parseLong(line[2]),
								Long.parseLong(line[3])));
					}
					case "R" -> {
						if (!"held".equals(line[5])) {
							leasesNotHeld.add("process " + candidate.number + " revoked term " + line[1] + " (" + line[2]
									+ "): " + line[5]);
						}
						if (open == null || !open[1].equals(line[1])) {
							protocol.add("process " + candidate.number + " revoked term " + line[1] + " not granted before");
						}
						else {
							intervals.add(new Interval(candidate.number, Long.parseLong(line[1]), Long.parseLong(open[2]),
									Long.parseLong(line[3]), Long.parseLong(open[3]), Long.parseLong(line[4]), line[2]));
						}
						open = null;
					}
					case "S+" -> openRun = line;
					case "S-" -> {
						if (openRun == null || !openRun[1].equals(line[1])) {
							protocol.add("process " + candidate.number + " ended a run of yes of term " + line[1]
									+ " not begun");
						}
						else {
							runs.add(new Run(candidate.number, Long.parseLong(line[1]), Long.parseLong(openRun[2]),
									Long.parseLong(line[2])));
						}
						openRun = null;
					}
					case "SAMPLES" -> {
						samples += Long.parseLong(line[1]);
						yes += Long.parseLong(line[2]);
					}
					case "ERR" -> errors.add("process " + candidate.number + ": " + String.join(",", line));
					default -> {
					}
				}
			}
			if (open != null) {
				if (candidate.fate == Fate.KILLED) {
					intervals.add(new Interval(candidate.number, Long.parseLong(open[1]), Long.parseLong(open[2]),
							candidate.killedMicros, Long.parseLong(open[3]), candidate.killedNanos, "KILLED"));
				}
				else {
					protocol.add("process " + candidate.number + " (" + candidate.fate + ") never revoked term " + open[1]);
				}
			}
			if (openRun != null) {
				if (candidate.fate == Fate.KILLED) {
					runs.add(new Run(candidate.number, Long.parseLong(openRun[1]), Long.parseLong(openRun[2]),
							candidate.killedNanos));
				}
				else {
					protocol.add("process " + candidate.number + " never ended its run of yes of term " + openRun[1]);
				}
			}
		}
		intervals.sort(Comparator.comparingLong(Interval::start));
		// two processes that both said they lead at one instant of the database's clock
		List<String> overlaps = new ArrayList<>();
		for (int i = 0; i < intervals.size(); i++) {
			for (int j = i + 1; j < intervals.size(); j++) {
				Interval a = intervals.get(i);
				Interval b = intervals.get(j);
				if (a.node() != b.node() && a.start() < b.end() && b.start() < a.end()) {
					overlaps.add(a + " and " + b + ": " + (Math.min(a.end(), b.end()) - b.start()) / 1000.0 + " ms");
				}
			}
		}
		// the terms in the order of the grants, on the database's clock
		grants.sort(Comparator.comparingLong(Grant::micros));
		List<String> termsOutOfOrder = new ArrayList<>();
		for (int i = 1; i < grants.size(); i++) {
			if (grants.get(i).term() <= grants.get(i - 1).term()) {
				termsOutOfOrder.add(grants.get(i - 1) + " then " + grants.get(i));
			}
		}
		// what the samplers saw: runs of yes of two processes at once, or a run past its term's revocation
		List<String> runOverlaps = new ArrayList<>();
		for (int i = 0; i < runs.size(); i++) {
			for (int j = i + 1; j < runs.size(); j++) {
				Run a = runs.get(i);
				Run b = runs.get(j);
				if (a.node() != b.node() && a.first() < b.last() && b.first() < a.last()) {
					runOverlaps.add(a + " and " + b);
				}
			}
		}
		List<String> runsOutside = new ArrayList<>();
		for (Run run : runs) {
			boolean inside = intervals.stream()
				.anyMatch((interval) -> interval.node() == run.node() && interval.term() == run.term()
						&& run.last() <= interval.endNanos());
			if (!inside) {
				runsOutside.add(run.toString());
			}
		}
		long origin = intervals.isEmpty() ? 0 : intervals.get(0).start();
		String label = database() + " leader election";
		System.out.println(label + ", " + CANDIDATES + " candidates at a time, one role, lease " + LEASE.toMillis()
				+ " ms, poll " + POLL.toMillis() + " ms, " + tookMillis + " ms: " + candidates.size()
				+ " processes, " + grants.size() + " grants, " + intervals.size()
				+ " leadership intervals (database clock, ms from the first):");
		for (Interval interval : intervals) {
			System.out.printf(Locale.ROOT, "  process %d, term %d: %.1f .. %.1f (%s)%n", interval.node(), interval.term(),
					(interval.start() - origin) / 1000.0, (interval.end() - origin) / 1000.0, interval.ended());
		}
		System.out.println(label + ": overlapping intervals " + overlaps.size() + overlaps + ", terms out of order "
				+ termsOutOfOrder.size() + termsOutOfOrder + ", protocol violations " + protocol.size() + protocol
				+ ", observer errors " + errors.size() + errors + ", events without their lease in the database "
				+ leasesNotHeld.size() + leasesNotHeld + "; samples of the processes that stopped " + samples + " (" + yes + " said leader) in "
				+ runs.size() + " runs, runs of two processes at once " + runOverlaps.size() + runOverlaps
				+ ", runs past their revocation " + runsOutside.size() + runsOutside);
		System.out.println(label + ": " + kills.size() + " kills, takeover after the kill "
				+ stats(kills, Failover::fromFault) + " ms, after the dead lease's end " + stats(kills, Failover::fromLeaseEnd) + " ms; " + stops.size()
				+ " graceful stops, hand-over from the revocation " + stats(stops, Failover::fromFault) + " ms; "
				+ stalls.size() + " leaders cut off, takeover after their step-down " + stats(stalls, Failover::fromFault)
				+ " ms, after the stall began " + stats(stalls, Failover::fromStall) + " ms (min/median/max)");
		for (Failover failover : kills) {
			System.out.println("  " + failover);
		}
		for (Failover failover : stops) {
			System.out.println("  " + failover);
		}
		for (Failover failover : stalls) {
			System.out.println("  " + failover);
		}
		SoftAssertions.assertSoftly((softly) -> {
			softly.assertThat(overlaps).as("overlapping leadership intervals").isEmpty();
			softly.assertThat(termsOutOfOrder).as("terms out of order").isEmpty();
			softly.assertThat(protocol).as("protocol violations").isEmpty();
			softly.assertThat(errors).as("observer errors").isEmpty();
			softly.assertThat(leasesNotHeld).as("granted or revoked events without their lease in the database").isEmpty();
			softly.assertThat(runOverlaps).as("runs of yes of two processes at once").isEmpty();
			softly.assertThat(runsOutside).as("runs of yes past their revocation").isEmpty();
			softly.assertThat(grants.stream().map(Grant::term).distinct().count()).as("distinct terms")
				.isEqualTo(grants.size());
			softly.assertThat(kills).as("kills").hasSizeGreaterThanOrEqualTo(ROUNDS);
			softly.assertThat(stops).as("graceful stops").hasSizeGreaterThanOrEqualTo(ROUNDS);
			softly.assertThat(stalls).as("leaders cut off").hasSizeGreaterThanOrEqualTo(ROUNDS);
			for (Failover kill : kills) {
				softly.assertThat(kill.leaseEnd()).as("the dead lease's row, read after " + kill).isNotNull();
				if (kill.leaseEnd() != null) {
					softly.assertThat(kill.next().micros())
						.as("taken at, not before the dead lease's end: " + kill)
						.isGreaterThanOrEqualTo(kill.leaseEnd());
				}
			}
			for (Failover stop : stops) {
				softly.assertThat(stop.how()).as("the revocation of a stopping leader").isEqualTo("STOPPED");
			}
			for (Failover stall : stalls) {
				softly.assertThat(stall.how()).as("the revocation of a leader cut off, before the takeover").isEqualTo("LOST");
			}
		});
	}

	private static String stats(List<Failover> failovers, ToLongFunction<Failover> micros) {
		List<Long> values = failovers.stream()
			.mapToLong(micros)
			.filter((value) -> value != Long.MIN_VALUE)
			.sorted()
			.boxed()
			.collect(Collectors.toList());
		if (values.isEmpty()) {
			return "-";
		}
		return String.format(Locale.ROOT, "%.0f/%.0f/%.0f", values.get(0) / 1000.0, values.get(values.size() / 2) / 1000.0,
				values.get(values.size() - 1) / 1000.0);
	}

	/** What happened to a candidate process. */
	private enum Fate {

		RUNNING, KILLED, STOPPED, ENDED

	}

	/** A granted event: the process, the term, the database's time and the monotonic time after the grant. */
	private record Grant(int node, long term, long micros, long nanos) {

		@Override
		public String toString() {
			return "process " + this.node + " granted term " + this.term + " at " + this.micros;
		}

	}

	/** When a process said it leads: its granted and revoked events, in the database's time and the monotonic. */
	private record Interval(int node, long term, long start, long end, long startNanos, long endNanos, String ended) {

		@Override
		public String toString() {
			return "process " + this.node + " term " + this.term + " [" + this.start + ", " + this.end + "] (" + this.ended
					+ ")";
		}

	}

	/** Samples of one term that said yes: the time after the first, the time before the last (monotonic). */
	private record Run(int node, long term, long first, long last) {

	}

	/**
	 * A fault and the takeover after it.
	 * @param node the leader's process
	 * @param term the leader's term
	 * @param next the grant that took over
	 * @param at the fault in the database's time: the kill's, the revocation's; -1 if none
	 * @param leaseEnd the dead lease's end, after a kill
	 * @param how how the leadership ended (the revocation's reason, or SIGKILL)
	 * @param stalledNanos when the leader's traffic stalled (monotonic), or -1
	 */
	private record Failover(int node, long term, Grant next, long at, @Nullable Long leaseEnd, String how,
			long stalledNanos) {

		long fromFault() {
			return (this.at < 0) ? Long.MIN_VALUE : this.next.micros() - this.at;
		}

		long fromLeaseEnd() {
			return (this.leaseEnd == null) ? Long.MIN_VALUE : this.next.micros() - this.leaseEnd;
		}

		long fromStall() {
			return (this.stalledNanos < 0) ? Long.MIN_VALUE : (this.next.nanos() - this.stalledNanos) / 1000;
		}

		@Override
		public String toString() {
			return "process " + this.node + " term " + this.term + " (" + this.how + ") -> process " + this.next.node()
					+ " term " + this.next.term() + ": "
					+ ((this.at < 0) ? "?" : String.format(Locale.ROOT, "%.1f", fromFault() / 1000.0)) + " ms"
					+ ((this.leaseEnd == null) ? ""
							: String.format(Locale.ROOT, " (%.1f ms after the dead lease's end)", fromLeaseEnd() / 1000.0));
		}

	}

	/** A candidate process and what it printed. */
	private static final class Candidate {

		private final int number;

		private final List<String[]> lines = new ArrayList<>();

		private final List<String> printed = new ArrayList<>();

		private NodeSupport.Node node;

		private volatile Fate fate = Fate.RUNNING;

		private long killedMicros;

		private long killedNanos;

		Candidate(int number) {
			this.number = number;
		}

		/** The lines of one kind. Under the election's monitor. */
		List<String[]> all(String kind) {
			return this.lines.stream().filter((line) -> line[0].equals(kind)).toList();
		}

		/** The term of its last granted event, or -1. Under the election's monitor. */
		long lastTerm() {
			List<String[]> granted = all("G");
			return granted.isEmpty() ? -1 : Long.parseLong(granted.get(granted.size() - 1)[1]);
		}

		/** Whether its last event is a grant. Under the election's monitor. */
		boolean leads() {
			for (int i = this.lines.size() - 1; i >= 0; i--) {
				String kind = this.lines.get(i)[0];
				if (kind.equals("G") || kind.equals("R")) {
					return kind.equals("G");
				}
			}
			return false;
		}

		/** The revoked event of a term, or null. Under the election's monitor. */
		String @Nullable [] revocation(long term) {
			return all("R").stream().filter((line) -> Long.parseLong(line[1]) == term).findFirst().orElse(null);
		}

		void send(String command) throws IOException {
			OutputStream in = this.node.process().getOutputStream();
			in.write((command + "\n").getBytes(StandardCharsets.UTF_8));
			in.flush();
		}

	}

	/** The candidate processes, started one after another, and the lines they print as they come. */
	private static final class Election {

		private final Object monitor = new Object();

		private final TestDatabase.Connection connection;

		private final List<Candidate> candidates = new ArrayList<>();

		Election(TestDatabase.Connection connection) {
			this.connection = connection;
		}

		Candidate start() throws IOException {
			Candidate candidate;
			synchronized (this.monitor) {
				candidate = new Candidate(this.candidates.size());
				this.candidates.add(candidate);
			}
			candidate.node = NodeSupport.start(LeaderNode.class, this.connection, (line) -> received(candidate, line), ROLE,
					LEASE.toMillis(), POLL.toMillis(), SAMPLE.toMillis());
			return candidate;
		}

		private void received(Candidate candidate, String line) {
			synchronized (this.monitor) {
				candidate.printed.add(line);
				String[] fields = line.split(",");
				if (KINDS.contains(fields[0])) {
					candidate.lines.add(fields);
				}
				this.monitor.notifyAll();
			}
		}

		List<Candidate> running() {
			synchronized (this.monitor) {
				return this.candidates.stream().filter((candidate) -> candidate.fate == Fate.RUNNING).toList();
			}
		}

		void awaitReady(Candidate candidate) throws InterruptedException {
			await("process " + candidate.number + " ready", () -> candidate.all("READY").isEmpty() ? null : true);
		}

		/** The running candidate that leads, the one of the highest term if several say so. */
		Candidate awaitLeader() throws InterruptedException {
			return await("a leader", () -> this.candidates.stream()
				.filter((candidate) -> candidate.fate == Fate.RUNNING && candidate.leads())
				.max(Comparator.comparingLong(Candidate::lastTerm))
				.orElse(null));
		}

		/** The first grant of a term above {@code term}, once a candidate other than the old leader has one. */
		Grant awaitTakeover(long term, Candidate old, String what) throws InterruptedException {
			return await("a takeover " + what, () -> {
				boolean taken = this.candidates.stream()
					.anyMatch((candidate) -> candidate != old && candidate.lastTerm() > term);
				if (!taken) {
					return null;
				}
				return this.candidates.stream()
					.flatMap((candidate) -> candidate.all("G")
						.stream()
						.map((line) -> new Grant(candidate.number, Long.parseLong(line[1]), Long.parseLong(line[2]),
								Long.parseLong(line[3]))))
					.filter((grant) -> grant.term() > term)
					.min(Comparator.comparingLong(Grant::term))
					.orElseThrow();
			});
		}

		/** Waits, under the monitor, until {@code probe} returns a value, at most {@link #AWAIT}. */
		<T> T await(String what, Supplier<@Nullable T> probe) throws InterruptedException {
			T value = awaitOrNull(AWAIT, probe);
			if (value == null) {
				throw new AssertionError("no " + what + " within " + AWAIT + "; the processes printed:\n" + printed());
			}
			return value;
		}

		/** Waits, under the monitor, until {@code probe} returns a value, at most {@code timeout}; else null. */
		<T> @Nullable T awaitOrNull(Duration timeout, Supplier<@Nullable T> probe) throws InterruptedException {
			long deadline = System.nanoTime() + timeout.toNanos();
			synchronized (this.monitor) {
				T value;
				while ((value = probe.get()) == null) {
					long left = deadline - System.nanoTime();
					if (left <= 0) {
						return null;
					}
					TimeUnit.NANOSECONDS.timedWait(this.monitor, left);
				}
				return value;
			}
		}

		private String printed() {
			StringBuilder all = new StringBuilder();
			for (Candidate candidate : this.candidates) {
				all.append("--- process ").append(candidate.number).append(" (").append(candidate.fate).append(")\n");
				for (String line : candidate.printed) {
					all.append(line).append('\n');
				}
			}
			return all.toString();
		}

		void destroyAll() throws InterruptedException {
			for (Candidate candidate : this.candidates) {
				if (candidate.node != null) {
					candidate.node.process().destroyForcibly().waitFor(10, TimeUnit.SECONDS);
				}
			}
		}

	}

}
