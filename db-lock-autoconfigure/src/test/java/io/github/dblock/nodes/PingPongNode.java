package io.github.dblock.nodes;

import java.time.Duration;
import java.util.Optional;

import com.zaxxer.hikari.HikariDataSource;
import io.github.dblock.support.DbLockTemplate;
import io.github.dblock.LockHandle;
import io.github.dblock.engine.LockEngine;

import org.springframework.jdbc.core.JdbcTemplate;

/**
 * One of two nodes that take turns on one key through a signal row: on its turn a node
 * tries the key with a zero wait (a refusal is counted, and it then waits for the key so
 * that the game goes on), holds it, closes the handle and only then passes the turn. A
 * release visible when {@code close()} returns means no refusal. Prints {@code refusals}.
 */
public final class PingPongNode {

	private PingPongNode() {
	}

	/**
	 * Runs the node.
	 * @param args JDBC URL, user, password, this node's number (0 or 1), turns
	 * @throws Exception on any failure
	 */
	public static void main(String[] args) throws Exception {
		int me = Integer.parseInt(args[3]);
		int turns = Integer.parseInt(args[4]);
		int refusals = 0;
		try (HikariDataSource dataSource = NodeSupport.dataSource(args[0], args[1], args[2], 4);
				LockEngine engine = NodeSupport.engine(dataSource)) {
			JdbcTemplate jdbc = new JdbcTemplate(dataSource);
			DbLockTemplate template = new DbLockTemplate(engine, "", Duration.ofSeconds(10), Duration.ofSeconds(30));
			for (int turn = 0; turn < turns; turn++) {
				NodeSupport.awaitSignal(jdbc, "SELECT turn FROM db_lock_test_turn WHERE id = 1", me);
				Optional<LockHandle> tried = template.tryAcquire("ping-pong", null);
				if (tried.isEmpty()) {
					refusals++;
				}
				try (LockHandle lock = tried.orElseGet(() -> template.acquire("ping-pong", null, null))) {
					jdbc.update("UPDATE db_lock_test_turn SET rounds = rounds + 1 WHERE id = 1");
				}
				jdbc.update("UPDATE db_lock_test_turn SET turn = ? WHERE id = 1", 1 - me);
			}
		}
		System.out.println("refusals=" + refusals);
	}

}
