package io.github.dblock.engine;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import com.zaxxer.hikari.HikariDataSource;
import io.github.dblock.jdbc.dialect.OneTransaction;
import io.github.dblock.jdbc.dialect.SqlDialect;
import io.github.dblock.testsupport.TestDatabase;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Statements sent in one round trip on MariaDB, as an anonymous compound statement
 * ({@code SqlSyntax#sentInSequence}, {@code SqlSyntax#sentTogether}): each statement of a
 * sequence commits before the next starts, and a later statement sees what another session
 * committed while an earlier one waited; statements sent together commit or roll back as
 * one. Another session stands for another node.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class MariaDbSentInSequenceTests {

	private static final String QUEUE = TestDatabase.TABLE + "_fair_queue";

	private final ExecutorService threads = Executors.newCachedThreadPool();

	private HikariDataSource plain;

	private JdbcTemplate jdbc;

	private SqlDialect dialect;

	private FairEnqueueScenarios fair;

	@BeforeAll
	void migrate() {
		this.plain = TestDatabase.MARIADB.dataSource(4);
		this.jdbc = new JdbcTemplate(this.plain);
		this.dialect = TestDatabase.MARIADB.dialect(this.plain);
		this.fair = new FairEnqueueScenarios(TestDatabase.MARIADB, this.plain);
		this.jdbc.execute("CREATE TABLE IF NOT EXISTS sequence_rows (id INT PRIMARY KEY)");
	}

	@AfterAll
	void close() {
		this.threads.shutdownNow();
		this.jdbc.execute("DROP TABLE IF EXISTS sequence_rows");
		this.plain.close();
	}

	/** In sequence, a statement that fails leaves the ones before it committed. */
	@Test
	void inSequenceEachStatementCommitsBeforeTheNext() {
		this.jdbc.update("DELETE FROM sequence_rows");
		String sql = this.dialect.sentInSequence("INSERT INTO sequence_rows (id) VALUES (?)",
				"INSERT INTO sequence_rows (id) VALUES (?)");
		assertThatExceptionOfType(DataAccessException.class)
			.isThrownBy(() -> OneTransaction.sendTogether(this.jdbc, sql, new Object[] { 1, 1 }));
		assertThat(this.jdbc.queryForList("SELECT id FROM sequence_rows", Integer.class)).containsExactly(1);
	}

	/**
	 * Together, a statement that fails leaves nothing of the ones before it, and the
	 * connection is not left in the transaction (a pool of one serves the next statement).
	 */
	@Test
	void togetherTheStatementsCommitAsOne() {
		this.jdbc.update("DELETE FROM sequence_rows");
		String sql = this.dialect.sentTogether("INSERT INTO sequence_rows (id) VALUES (?)",
				"INSERT INTO sequence_rows (id) VALUES (?)");
		try (HikariDataSource one = TestDatabase.MARIADB.dataSource(1)) {
			JdbcTemplate single = new JdbcTemplate(one);
			assertThatExceptionOfType(DataAccessException.class)
				.isThrownBy(() -> OneTransaction.sendTogether(single, sql, new Object[] { 2, 2 }));
			assertThat(single.queryForObject("SELECT @@in_transaction", Integer.class)).isZero();
		}
		assertThat(this.jdbc.queryForList("SELECT id FROM sequence_rows", Integer.class)).isEmpty();
	}

	@Test
	void theFirstLookSeesATicketCommittedWhileTheEnqueueWaitedForTheKeysRow() throws Exception {
		try (HikariDataSource pool = TestDatabase.MARIADB.dataSource(4)) {
			this.fair.firstLookSeesATicketCommittedWhileTheEnqueueWaited("fair-sequence-look", pool, this.threads,
					this::enqueueWaits);
		}
	}

	@Test
	void aFailedEnqueueLeavesNoTicketAndItsConnectionUsable() throws Exception {
		try (HikariDataSource pool = TestDatabase.MARIADB.impatientDataSource(1)) {
			this.fair.failedEnqueueLeavesNoTicketAndItsConnectionUsable("fair-sequence-failed", pool);
		}
	}

	private boolean enqueueWaits() {
		Long count = this.jdbc.queryForObject("SELECT COUNT(*) FROM information_schema.innodb_trx "
				+ "WHERE trx_state = 'LOCK WAIT' AND trx_query LIKE ?", Long.class, "%INSERT INTO " + QUEUE + " %");
		return count != null && count > 0;
	}

}
