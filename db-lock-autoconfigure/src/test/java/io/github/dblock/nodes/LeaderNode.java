package io.github.dblock.nodes;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import com.zaxxer.hikari.HikariDataSource;
import io.github.dblock.engine.LockEngine;
import io.github.dblock.jdbc.JdbcLockRepository;
import io.github.dblock.jdbc.LockRow;
import io.github.dblock.jdbc.dialect.SqlDialect;
import io.github.dblock.leader.DbLockLeaders;
import io.github.dblock.leader.LeadershipGrantedEvent;
import io.github.dblock.leader.LeadershipRevokedEvent;
import io.github.dblock.support.DbLockTemplate;
import io.github.dblock.testsupport.StallingProxy;
import io.github.dblock.testsupport.TestDatabase;

import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.SmartLifecycle;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * One candidate of the leader election, as a process of its own: a {@link DbLockLeaders} of
 * one role whose engine reaches the database through a {@link StallingProxy} of its own (so
 * that its test can cut this process off the database while the others still reach it), and
 * an observer that reads the database's clock on a pool of its own, straight to the database.
 * Prints, one line each:
 * <ul>
 * <li>{@code READY,<nanoTime>} once the election runs;</li>
 * <li>{@code G,<term>,<dbMicros>,<nanoTime>,<lease>} on each granted event, all read in the
 * listener, after the grant: from then on at the latest this process says it leads;</li>
 * <li>{@code R,<term>,<reason>,<dbMicros>,<nanoTime>,<lease>} on each revoked event, all read
 * in the listener, before it returns, so before the lease is released: by then this process
 * no longer says it leads, and no other can have the lease;</li>
 * <li>where {@code <lease>}, read after the database's time, says whose valid lease of the
 * role the database had then: {@code held} (this term's), {@code other-<term>} or
 * {@code none};</li>
 * <li>{@code S+,<term>,<nanoTime>} and {@code S-,<term>,<nanoTime>}: what a sampler asking
 * {@link DbLockLeaders#term(String)} (that is {@link DbLockLeaders#isLeader(String)} and the
 * term) every few milliseconds saw: the first sample that said it leads (the time read after
 * asking), and the last one that did (the time read before asking), when a run of such
 * samples ends;</li>
 * <li>{@code STALLED,<nanoTime>} and {@code RESUMED,<nanoTime>} when its traffic to the
 * database stops and flows again; {@code STOPPING,<nanoTime>} and {@code STOPPED,<nanoTime>}
 * around {@link DbLockLeaders#stop()}; {@code ERR,<message>} if the observer fails.</li>
 * </ul>
 * {@code <nanoTime>} is {@link System#nanoTime()}: on Linux, the system's monotonic clock,
 * the same in every process of the machine. Reads commands on its standard input:
 * {@code stall}, {@code resume}, {@code stop} (then it ends with exit code 0; also at the end
 * of its input).
 */
public final class LeaderNode {

	private LeaderNode() {
	}

	/**
	 * Runs the node.
	 * @param args JDBC URL, user, password, role, lease in milliseconds, poll interval in
	 * milliseconds, sampling interval in milliseconds
	 * @throws Exception on any failure (the exit code is then not 0)
	 */
	public static void main(String[] args) throws Exception {
		String role = args[3];
		Duration lease = Duration.ofMillis(Long.parseLong(args[4]));
		Duration poll = Duration.ofMillis(Long.parseLong(args[5]));
		long sampleNanos = TimeUnit.MILLISECONDS.toNanos(Long.parseLong(args[6]));
		TestDatabase.Connection database = new TestDatabase.Connection(args[0], args[1], args[2], false);
		try (StallingProxy proxy = StallingProxy.before(database);
				HikariDataSource dataSource = NodeSupport.dataSource(proxy.url(database), args[1], args[2], 6);
				HikariDataSource observed = NodeSupport.dataSource(args[0], args[1], args[2], 2)) {
			JdbcLockRepository repository = NodeSupport.repository(dataSource);
			JdbcLockRepository observer = NodeSupport.repository(observed);
			JdbcTemplate clock = new JdbcTemplate(observed);
			try (LockEngine engine = NodeSupport.engine(repository)) {
				DbLockTemplate template = new DbLockTemplate(engine, "", Duration.ofSeconds(10), Duration.ofMinutes(5));
				String key = template.storedKey(DbLockLeaders.KEY_PREFIX + role);
				ApplicationEventPublisher publisher = (event) -> {
					if (event instanceof LeadershipGrantedEvent granted) {
						long nanos = System.nanoTime();
						long micros = databaseMicros(clock, observer.dialect());
						System.out.println("G," + granted.term() + "," + micros + "," + nanos + ","
								+ lease(observer, key, granted.term()));
					}
					else if (event instanceof LeadershipRevokedEvent revoked) {
						long micros = databaseMicros(clock, observer.dialect());
						String held = lease(observer, key, revoked.term());
						System.out.println("R," + revoked.term() + "," + revoked.reason() + "," + micros + ","
								+ System.nanoTime() + "," + held);
					}
				};
				DbLockLeaders leaders = new DbLockLeaders(template, engine, repository, List.of(role), lease, poll,
						publisher, Map::<String, List<SmartLifecycle>>of);
				Sampler sampler = new Sampler(leaders, role, sampleNanos);
				Thread sampling = new Thread(sampler, "leader-sampler");
				sampling.setDaemon(true);
				sampling.start();
				leaders.start();
				System.out.println("READY," + System.nanoTime());
				BufferedReader commands = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
				String command;
				while ((command = commands.readLine()) != null && !"stop".equals(command.strip())) {
					switch (command.strip()) {
						case "stall" -> {
							proxy.stall();
							System.out.println("STALLED," + System.nanoTime());
						}
						case "resume" -> {
							proxy.resume();
							System.out.println("RESUMED," + System.nanoTime());
						}
						default -> System.out.println("ERR,unknown command " + command);
					}
				}
				proxy.resume();
				System.out.println("STOPPING," + System.nanoTime());
				leaders.stop();
				sampler.stop();
				sampling.join(TimeUnit.SECONDS.toMillis(10));
				System.out.println("STOPPED," + System.nanoTime());
			}
		}
	}

	/** The database's now in microseconds, or -1 (with an {@code ERR} line) if it cannot be read. */
	private static long databaseMicros(JdbcTemplate clock, SqlDialect dialect) {
		try {
			return NodeSupport.databaseMicros(clock, dialect);
		}
		catch (RuntimeException ex) {
			System.out.println("ERR,the database's clock could not be read: " + ex.toString().replace('\n', ' '));
			return -1;
		}
	}

	/**
	 * Whose lease of the role the database has, valid by its clock: {@code held} (the term's),
	 * {@code other-<term>} or {@code none}.
	 */
	private static String lease(JdbcLockRepository observer, String key, long term) {
		try {
			Optional<LockRow> row = observer.validRow(key);
			if (row.isEmpty()) {
				return "none";
			}
			long held = LockEngine.firstFencingToken(row.get().token());
			return (held == term) ? "held" : "other-" + held;
		}
		catch (RuntimeException ex) {
			System.out.println("ERR,the role's row could not be read: " + ex.toString().replace('\n', ' '));
			return "unknown";
		}
	}

	/** Asks whether this process leads, every sampling interval, and prints the runs of yes. */
	private static final class Sampler implements Runnable {

		private final DbLockLeaders leaders;

		private final String role;

		private final long intervalNanos;

		private volatile boolean stopped;

		Sampler(DbLockLeaders leaders, String role, long intervalNanos) {
			this.leaders = leaders;
			this.role = role;
			this.intervalNanos = intervalNanos;
		}

		void stop() {
			this.stopped = true;
		}

		@Override
		public void run() {
			long runTerm = -1;
			long lastYes = 0;
			long samples = 0;
			long yes = 0;
			while (!this.stopped) {
				long before = System.nanoTime();
				OptionalLong term = this.leaders.term(this.role);
				long after = System.nanoTime();
				samples++;
				if (term.isPresent()) {
					yes++;
					if (term.getAsLong() != runTerm) {
						if (runTerm != -1) {
							System.out.println("S-," + runTerm + "," + lastYes);
						}
						runTerm = term.getAsLong();
						System.out.println("S+," + runTerm + "," + after);
					}
					lastYes = before;
				}
				else if (runTerm != -1) {
					System.out.println("S-," + runTerm + "," + lastYes);
					runTerm = -1;
				}
				LockSupport.parkNanos(this.intervalNanos);
			}
			if (runTerm != -1) {
				System.out.println("S-," + runTerm + "," + lastYes);
			}
			System.out.println("SAMPLES," + samples + "," + yes);
		}

	}

}
