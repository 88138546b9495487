package io.github.dblock.shedlock.nodes;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import io.github.dblock.DbLockContext;
import io.github.dblock.LockHandle;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.spring.annotation.EnableSchedulerLock;
import net.javacrumbs.shedlock.spring.annotation.SchedulerLock;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;

/**
 * One node of {@link MariaDbShedLockProcessesTests}: a Spring Boot application whose only
 * lock provider is the one db-lock-shedlock auto-configures, with a job scheduled every
 * two seconds under ShedLock's own annotations. Each run records its slot (the two seconds
 * it was scheduled for, on the node's clock), the node, its fencing token read through
 * {@link DbLockContext}, and its start and end in the database's time. The node says it is
 * ready once started, and ends once the runs that started after both nodes were ready are
 * {@code runs} or more and came from both nodes, or after {@code timeout-seconds}.
 * <p>
 * Arguments: JDBC URL, user, password, node name, runs, timeout in seconds.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
@EnableScheduling
@EnableSchedulerLock(defaultLockAtMostFor = "PT30S")
public class ShedLockNode {

	/** The ShedLock lock's name, and so the db-lock key. */
	static final String JOB = "shedlock-processes-job";

	/** How long the job works under the lock. */
	static final Duration WORK = Duration.ofMillis(200);

	/** db-lock's tables of these tests, all named with this prefix. */
	static final String TABLE = "db_lock_shedlock";

	static final String RUNS_TABLE = TABLE + "_runs";

	static final String NODES_TABLE = TABLE + "_nodes";

	/** The runs since both nodes were ready: how many, from how many nodes. */
	private static final String CONTENDED_RUNS = "SELECT COUNT(*), COUNT(DISTINCT node) FROM " + RUNS_TABLE
			+ " WHERE ended_at IS NOT NULL AND (SELECT COUNT(*) FROM " + NODES_TABLE + ") = 2 AND started_at > (SELECT MAX(ready_at) FROM "
			+ NODES_TABLE + ")";

	public static void main(String[] args) {
		String node = args[3];
		int runs = Integer.parseInt(args[4]);
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(Long.parseLong(args[5]));
		SpringApplication application = new SpringApplication(ShedLockNode.class);
		ConfigurableApplicationContext context = application.run("--spring.datasource.url=" + args[0],
				"--spring.datasource.username=" + args[1], "--spring.datasource.password=" + args[2],
				"--spring.datasource.hikari.maximum-pool-size=4", "--spring.main.web-application-type=none",
				"--spring.main.banner-mode=off", "--logging.level.root=WARN", "--db-lock.table-name=" + TABLE,
				"--db-lock.schema.migrate=false", "--node.name=" + node,
				// a run under way when the node stops finishes and records its end
				"--spring.task.scheduling.shutdown.await-termination=true",
				"--spring.task.scheduling.shutdown.await-termination-period=10s");
		int status = 0;
		try {
			JdbcTemplate jdbc = context.getBean(JdbcTemplate.class);
			System.out.println("lockProvider=" + context.getBean(LockProvider.class)
				.getClass()
				.getSimpleName());
			jdbc.update("INSERT INTO " + NODES_TABLE + " (node, ready_at) VALUES (?, CURRENT_TIMESTAMP(6))", node);
			while (!enough(jdbc, runs)) {
				if (System.nanoTime() - deadline > 0) {
					System.out.println("node " + node + ": fewer than " + runs + " contended runs from both nodes in time");
					status = 1;
					break;
				}
				LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100));
			}
		}
		finally {
			context.close();
		}
		System.exit(status);
	}

	private static boolean enough(JdbcTemplate jdbc, int runs) {
		return Boolean.TRUE.equals(jdbc.query(CONTENDED_RUNS,
				(rs) -> rs.next() && rs.getInt(1) >= runs && rs.getInt(2) == 2));
	}

	@Bean
	Job job(JdbcTemplate jdbc, Environment environment) {
		return new Job(jdbc, environment.getRequiredProperty("node.name"));
	}

	/** The scheduled job. */
	public static class Job {

		private final JdbcTemplate jdbc;

		private final String node;

		Job(JdbcTemplate jdbc, String node) {
			this.jdbc = jdbc;
			this.node = node;
		}

		@Scheduled(cron = "*/2 * * * * *")
		@SchedulerLock(name = JOB, lockAtMostFor = "PT10S", lockAtLeastFor = "PT1.5S")
		public void run() throws InterruptedException {
			long slot = System.currentTimeMillis() / 2000;
			LockHandle lock = DbLockContext.current()
				.orElseThrow(() -> new IllegalStateException("no db-lock handle on the job's thread"));
			this.jdbc.update("INSERT INTO " + RUNS_TABLE + " (slot, node, token, lock_key, held, started_at)"
					+ " VALUES (?, ?, ?, ?, ?, CURRENT_TIMESTAMP(6))", slot, this.node, lock.fencingToken(), lock.key(),
					lock.isHeld());
			Thread.sleep(WORK.toMillis());
			this.jdbc.update("UPDATE " + RUNS_TABLE + " SET ended_at = CURRENT_TIMESTAMP(6) WHERE token = ?",
					lock.fencingToken());
		}

	}

}
