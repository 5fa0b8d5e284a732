/**
 * One Intl.DateTimeFormat per time zone, kept: building one costs far more than formatting with it.
 * A zone's name may come from a reseller (a customer's timezone), and the runtime accepts any
 * spelling of a name's case ("europe/LONDON"), so the names seen are not bounded by the zones that
 * exist: at most ZONE_FORMATS_KEPT formatters are kept, the one least recently built going first.
 * Pure apart from its cache; a zone the runtime does not know throws, as building it would, and is
 * not kept.
 */

/** Formatters kept per ZoneFormats: more than the IANA zones there are (about 600). */
export const ZONE_FORMATS_KEPT = 1_000;

export class ZoneFormats {
  readonly #kept = new Map<string, Intl.DateTimeFormat>();

  constructor(
    private readonly locale: string,
    private readonly options: Omit<Intl.DateTimeFormatOptions, 'timeZone'>,
  ) {}

  /** The formatter for `zone`. */
  get(zone: string): Intl.DateTimeFormat {
    let format = this.#kept.get(zone);
    if (!format) {
      format = new Intl.DateTimeFormat(this.locale, { ...this.options, timeZone: zone });
      if (this.#kept.size >= ZONE_FORMATS_KEPT) this.#kept.delete(this.#kept.keys().next().value!);
      this.#kept.set(zone, format);
    }
    return format;
  }

  /** How many formatters are kept. */
  get size(): number {
    return this.#kept.size;
  }
}
