package io.github.dblock.nodes;

import io.github.dblock.testsupport.OwnPostgreSql;
import io.github.dblock.testsupport.OwnServer;

class PostgreSqlDatabaseRestartTests extends DatabaseRestartContractTests {

	@Override
	protected OwnServer start() throws Exception {
		return OwnPostgreSql.start();
	}

}
