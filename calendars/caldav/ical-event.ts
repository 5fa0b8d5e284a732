/**
 * iCalendar (RFC 5545) for the CalDAV adapter, through ical.js: the VCALENDAR of a meeting we
 * write, and the busy times and identity read from the calendar objects a server returns
 * (recurring events expanded over the asked range, exceptions applied).
 */
import ICAL from 'ical.js';
import type { BusyInterval, CalendarEventInput } from '../calendar.ts';

const PRODID = '-//Appointments//Calendar booking//EN';
/** Recurring series are expanded at most this far, so a malformed RRULE cannot spin forever. */
const MAX_OCCURRENCES = 5000;
/** An event longer than this (a DURATION of centuries costs ical.js seconds to add) is not read. */
const MAX_EVENT_SECONDS = 400 * 86_400;

/**
 * What reading one answer's events may cost in all, shared by every calendar object of the answer:
 * occurrences stepped through and wall time. The reading runs on the event loop every call shares,
 * so a calendar of many hostile series must not hold it for long.
 */
export interface ReadBudget {
  occurrences: number;
  deadline: number;
}
export const readBudget = (occurrences = 50_000, ms = 2_000): ReadBudget => ({ occurrences, deadline: Date.now() + ms });

/** The budget ran out: the answer holds more than can be read (the adapter says the calendar could not be read). */
export class ReadBudgetExceeded extends Error {
  constructor() {
    super('the calendar holds more events than can be read');
    this.name = 'ReadBudgetExceeded';
  }
}

/** Whether a VEVENT's DURATION is beyond what is read (an end far past its start is not computed). */
function tooLong(vevent: ICAL.Component): boolean {
  const duration = vevent.getFirstPropertyValue('duration') as ICAL.Duration | null;
  return duration != null && typeof duration === 'object' && Math.abs(duration.toSeconds()) > MAX_EVENT_SECONDS;
}

/**
 * A VCALENDAR holding one opaque VEVENT. Times are written in UTC (`…Z`): an IANA zone would need
 * its VTIMEZONE, and calendars show UTC times in their user's own zone anyway. The zone the
 * meeting was agreed in is kept as the non-standard `X-WR-TIMEZONE`-like `X-APPOINTMENT-TIMEZONE`.
 */
export function eventToICalendar(input: CalendarEventInput, now = new Date()): string {
  const vcalendar = new ICAL.Component(['vcalendar', [], []]);
  vcalendar.updatePropertyWithValue('prodid', PRODID);
  vcalendar.updatePropertyWithValue('version', '2.0');
  const vevent = new ICAL.Component('vevent');
  const event = new ICAL.Event(vevent);
  event.uid = input.uid;
  event.startDate = ICAL.Time.fromJSDate(input.start, true);
  event.endDate = ICAL.Time.fromJSDate(input.end, true);
  event.summary = input.title;
  event.description = input.description;
  vevent.updatePropertyWithValue('dtstamp', ICAL.Time.fromJSDate(now, true));
  vevent.updatePropertyWithValue('transp', 'OPAQUE');
  vevent.updatePropertyWithValue('status', 'CONFIRMED');
  vevent.updatePropertyWithValue('x-appointment-timezone', input.timezone);
  vcalendar.addSubcomponent(vevent);
  return vcalendar.toString();
}

/** What one calendar object resource says about its event (the master, or the first VEVENT). */
export interface EventSummary {
  uid: string | null;
  start: Date;
  end: Date;
  /** TRANSP:TRANSPARENT (the event does not take the time). */
  transparent: boolean;
  /** STATUS:CANCELLED. */
  cancelled: boolean;
}

function parse(ics: string): ICAL.Component | null {
  try {
    return ICAL.Component.fromString(ics);
  } catch {
    return null;
  }
}

const isTransparent = (c: ICAL.Component) => String(c.getFirstPropertyValue('transp') ?? '').toUpperCase() === 'TRANSPARENT';
const isCancelled = (c: ICAL.Component) => String(c.getFirstPropertyValue('status') ?? '').toUpperCase() === 'CANCELLED';

/**
 * An occurrence's [start, end) as instants a Date and PostgreSQL hold, or null: a start that
 * cannot be read is no occurrence; an end that cannot be read (a DURATION of centuries) or that
 * comes before the start makes it last no time (it takes nothing, it is never an inverted interval).
 */
function span(start: ICAL.Time | null | undefined, end: ICAL.Time | null | undefined): { start: Date; end: Date } | null {
  const s = start?.toJSDate();
  if (!s || !Number.isFinite(s.getTime())) return null;
  let e: Date | undefined;
  try {
    e = end?.toJSDate();
  } catch {
    e = undefined;
  }
  return { start: s, end: e && Number.isFinite(e.getTime()) && e >= s ? e : s };
}

/**
 * The event of a calendar object: null when it holds no VEVENT, `unreadable` when it cannot be
 * read (not iCalendar, or a hostile or broken event such as `DTSTART:notadate`): never thrown, so
 * one such object neither fails a whole sync nor passes for a deleted meeting.
 */
export function readEvent(ics: string): EventSummary | null | 'unreadable' {
  try {
    const vcalendar = parse(ics);
    if (!vcalendar) return 'unreadable';
    const vevents = vcalendar.getAllSubcomponents('vevent');
    const master = vevents.find((v) => !v.hasProperty('recurrence-id')) ?? vevents[0];
    if (!master) return null;
    const event = new ICAL.Event(master);
    const times = span(event.startDate, tooLong(master) ? null : event.endDate);
    if (!times) return 'unreadable';
    return { uid: event.uid ?? null, ...times, transparent: isTransparent(master), cancelled: isCancelled(master) };
  } catch {
    return 'unreadable';
  }
}

/**
 * The busy intervals a calendar object gives in [from, to): each occurrence of its events
 * (recurrences expanded, RECURRENCE-ID exceptions applied), skipping transparent and cancelled ones.
 */
export function busyIntervals(ics: string, from: Date, to: Date, budget: ReadBudget = readBudget()): BusyInterval[] {
  const vcalendar = parse(ics);
  if (!vcalendar) return [];
  const vevents = vcalendar.getAllSubcomponents('vevent');
  const out: BusyInterval[] = [];
  const push = (times: { start: Date; end: Date } | null) => {
    if (times && times.end > times.start && times.start < to && times.end > from) out.push(times);
  };
  for (const vevent of vevents) {
    if (vevent.hasProperty('recurrence-id')) continue; // applied through its master below
    // One unreadable event (a broken DTSTART, an RRULE ical.js refuses) is skipped, not the whole answer.
    try {
      if (tooLong(vevent)) continue;
      const event = new ICAL.Event(vevent, { exceptions: vevents.filter((v) => v !== vevent && v.hasProperty('recurrence-id')) });
      if (!event.startDate) continue;
      if (!event.isRecurring()) {
        if (!isTransparent(vevent) && !isCancelled(vevent)) push(span(event.startDate, event.endDate));
        continue;
      }
      const iterator = event.iterator();
      for (let n = 0, next = iterator.next(); next && n < MAX_OCCURRENCES; n++, next = iterator.next()) {
        if (--budget.occurrences < 0 || (n % 64 === 0 && Date.now() > budget.deadline)) throw new ReadBudgetExceeded();
        if (next.toJSDate() >= to) break;
        const details = event.getOccurrenceDetails(next);
        const item = details.item.component;
        if (isTransparent(item) || isCancelled(item)) continue;
        push(span(details.startDate, details.endDate));
      }
    } catch (err) {
      if (err instanceof ReadBudgetExceeded) throw err;
      continue;
    }
  }
  return out;
}

/** The busy periods of a VFREEBUSY answer (RFC 4791 §7.10): every FREEBUSY period whose FBTYPE is not FREE. */
export function readFreeBusy(ics: string): BusyInterval[] {
  const vcalendar = parse(ics);
  const out: BusyInterval[] = [];
  for (const vfreebusy of vcalendar?.getAllSubcomponents('vfreebusy') ?? []) {
    for (const prop of vfreebusy.getAllProperties('freebusy')) {
      if (String(prop.getParameter('fbtype') ?? 'BUSY').toUpperCase() === 'FREE') continue;
      try {
        for (const period of prop.getValues() as ICAL.Period[]) {
          const times = span(period.start, period.getEnd());
          if (times && times.end > times.start) out.push(times);
        }
      } catch {
        continue; // a period that cannot be read
      }
    }
  }
  return out;
}
