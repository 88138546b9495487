package io.github.dblock.sample;

/**
 * Where an order is in its payment.
 */
public enum OrderStatus {

	/**
	 * Not paid yet.
	 */
	UNPAID,

	/**
	 * Charged once and paid.
	 */
	PAID

}
