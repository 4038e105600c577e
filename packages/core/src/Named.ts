import { Order } from "effect"

/** One extension's contribution to an event: its (unique) name and its reply or value. */
export interface Named<A> {
  readonly name: string
  readonly value: A
}

/**
 * Canonical order: extension names compared by UTF-16 code units. Deliberately not `localeCompare`, whose
 * result depends on the machine's locale: the same config must give the same outcome everywhere.
 */
export const NameOrder: Order.Order<string> = Order.String

/** A copy sorted by name (canonical order); the input is not touched. */
export const sortByName = <A extends { readonly name: string }>(items: ReadonlyArray<A>): Array<A> =>
  [...items].sort((a, b) => NameOrder(a.name, b.name))
