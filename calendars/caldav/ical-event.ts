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

/** The event of a calendar object (null when it holds no VEVENT or cannot be read). */
export function readEvent(ics: string): EventSummary | null {
  const vcalendar = parse(ics);
  const vevents = vcalendar?.getAllSubcomponents('vevent') ?? [];
  const master = vevents.find((v) => !v.hasProperty('recurrence-id')) ?? vevents[0];
  if (!master) return null;
  const event = new ICAL.Event(master);
  if (!event.startDate) return null;
  return {
    uid: event.uid ?? null,
    start: event.startDate.toJSDate(),
    end: (event.endDate ?? event.startDate).toJSDate(),
    transparent: isTransparent(master),
    cancelled: isCancelled(master),
  };
}

/**
 * The busy intervals a calendar object gives in [from, to): each occurrence of its events
 * (recurrences expanded, RECURRENCE-ID exceptions applied), skipping transparent and cancelled ones.
 */
export function busyIntervals(ics: string, from: Date, to: Date): BusyInterval[] {
  const vcalendar = parse(ics);
  if (!vcalendar) return [];
  const vevents = vcalendar.getAllSubcomponents('vevent');
  const out: BusyInterval[] = [];
  const push = (start: Date, end: Date) => {
    if (start < to && end > from) out.push({ start, end });
  };
  for (const vevent of vevents) {
    if (vevent.hasProperty('recurrence-id')) continue; // applied through its master below
    const event = new ICAL.Event(vevent, { exceptions: vevents.filter((v) => v !== vevent && v.hasProperty('recurrence-id')) });
    if (!event.startDate) continue;
    if (!event.isRecurring()) {
      if (!isTransparent(vevent) && !isCancelled(vevent)) push(event.startDate.toJSDate(), (event.endDate ?? event.startDate).toJSDate());
      continue;
    }
    const iterator = event.iterator();
    for (let n = 0, next = iterator.next(); next && n < MAX_OCCURRENCES; n++, next = iterator.next()) {
      if (next.toJSDate() >= to) break;
      const details = event.getOccurrenceDetails(next);
      const item = details.item.component;
      if (isTransparent(item) || isCancelled(item)) continue;
      push(details.startDate.toJSDate(), details.endDate.toJSDate());
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
      for (const period of prop.getValues() as ICAL.Period[]) out.push({ start: period.start.toJSDate(), end: period.getEnd().toJSDate() });
    }
  }
  return out;
}
