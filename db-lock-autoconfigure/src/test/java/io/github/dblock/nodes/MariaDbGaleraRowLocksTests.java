package io.github.dblock.nodes;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;

import io.github.dblock.testsupport.GaleraCluster;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Why db-lock refuses its transaction mode on Galera, measured on a 2-member cluster of the
 * test's own: {@code SELECT ... FOR UPDATE} on one row, in open transactions on two members,
 * returns on both at once. A row lock is local to its member until commit, where
 * certification lets only one of the two commits through: two callers would hold "the
 * lock" together for the whole of their work.
 */
class MariaDbGaleraRowLocksTests {

	@Test
	void aRowLockedForUpdateOnOneMemberCanBeLockedOnAnotherAtOnce() throws Exception {
		try (GaleraCluster cluster = GaleraCluster.start(2)) {
			String first = "jdbc:mariadb://127.0.0.1:" + cluster.member(0).port() + "/test";
			String second = "jdbc:mariadb://127.0.0.1:" + cluster.member(1).port() + "/test";
			try (Connection a = DriverManager.getConnection(first, "root", "");
					Connection b = DriverManager.getConnection(second, "root", "")) {
				try (Statement statement = a.createStatement()) {
					statement.execute("CREATE TABLE row_lock (id INT PRIMARY KEY, holder VARCHAR(8))");
					statement.execute("INSERT INTO row_lock VALUES (1, NULL)");
				}
				// the second member has the row (a synchronous read waits for it)
				try (Statement statement = b.createStatement()) {
					statement.execute("SET SESSION wsrep_sync_wait = 1");
					try (ResultSet rs = statement.executeQuery("SELECT COUNT(*) FROM row_lock")) {
						rs.next();
						assertThat(rs.getInt(1)).isEqualTo(1);
					}
					// on one member, a second session would wait for the lock; here it must not
					statement.execute("SET SESSION innodb_lock_wait_timeout = 1");
				}
				a.setAutoCommit(false);
				b.setAutoCommit(false);
				try (Statement onA = a.createStatement(); Statement onB = b.createStatement()) {
					onA.executeQuery("SELECT holder FROM row_lock WHERE id = 1 FOR UPDATE").close();
					// no lock wait timeout (1205): both transactions hold the row lock now
					onB.executeQuery("SELECT holder FROM row_lock WHERE id = 1 FOR UPDATE").close();
					onA.executeUpdate("UPDATE row_lock SET holder = 'a' WHERE id = 1");
					onB.executeUpdate("UPDATE row_lock SET holder = 'b' WHERE id = 1");
				}
				a.commit();
				boolean bothCommitted;
				try {
					b.commit();
					bothCommitted = true;
				}
				catch (java.sql.SQLException ex) {
					// certification: the later commit is aborted as a deadlock (1213)
					assertThat(ex.getErrorCode()).isEqualTo(1213);
					bothCommitted = false;
				}
				System.out.println("Galera FOR UPDATE on two members: both held the row lock at once; both commits "
						+ (bothCommitted ? "succeeded" : "did not: the second failed certification"));
			}
		}
	}

}
