package io.github.dblock.sample;

import java.util.Optional;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Repository;

/**
 * Reads and updates orders in the {@code sample_order} table.
 */
@Repository
public class OrderRepository {

	private final JdbcClient jdbc;

	/**
	 * Creates a repository.
	 * @param jdbc the application's JDBC client
	 */
	public OrderRepository(JdbcClient jdbc) {
		this.jdbc = jdbc;
	}

	/**
	 * Finds an order.
	 * @param id the order's id
	 * @return the order, or empty if there is none with this id
	 */
	public Optional<Order> findById(long id) {
		return this.jdbc
			.sql("SELECT id, amount, status, charge_count, payment_ref FROM sample_order WHERE id = ?")
			.param(id)
			.query(Order.class)
			.optional();
	}

	/**
	 * Records one charge and marks the order paid.
	 * @param id the order's id
	 * @param paymentRef the payment provider's reference of the charge
	 */
	public void markPaid(long id, String paymentRef) {
		this.jdbc
			.sql("UPDATE sample_order SET status = ?, charge_count = charge_count + 1, payment_ref = ? WHERE id = ?")
			.params(OrderStatus.PAID.name(), paymentRef, id)
			.update();
	}

}
