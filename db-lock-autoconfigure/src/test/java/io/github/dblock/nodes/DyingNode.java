package io.github.dblock.nodes;

import java.time.Duration;

import com.zaxxer.hikari.HikariDataSource;
import io.github.dblock.support.DbLockTemplate;
import io.github.dblock.engine.LockEngine;

/**
 * A node that takes a key, releases it, and dies at once, with no shutdown of anything:
 * whatever the release left to do is never done.
 */
public final class DyingNode {

	private DyingNode() {
	}

	/**
	 * Runs the node.
	 * @param args JDBC URL, user, password, key
	 * @throws Exception on any failure
	 */
	public static void main(String[] args) throws Exception {
		HikariDataSource dataSource = NodeSupport.dataSource(args[0], args[1], args[2], 4);
		LockEngine engine = NodeSupport.engine(dataSource);
		DbLockTemplate template = new DbLockTemplate(engine, "", Duration.ofSeconds(10), Duration.ofMinutes(5));
		template.acquire(args[3], null, null).close();
		System.out.println("released=true");
		System.out.flush();
		Runtime.getRuntime().halt(0);
	}

}
