import { EVENT_TYPES } from '../../actors/webhooks/event-types.ts';
import { Type, Timestamp, ModeSchema, ADDITIVE, type TSchema } from './common.ts';
import { ApiKeySchema } from './account.ts';
import { AppointmentSchema, CallSchema } from './calls.ts';
import { ReadinessSchema } from './customers.ts';
import { BalanceSchema } from './money.ts';
import { NumberSchema } from './numbers.ts';
import { WebsiteSchema } from './websites.ts';

type EventType = (typeof EVENT_TYPES)[number];

/** key.rotated: the key without its secret, and when the previous secret stops working (docs/api.md, Authentication). */
const RotatedKeySchema = Type.Object(
  { ...ApiKeySchema.properties, previous_secret_expires_at: Timestamp },
  { $id: 'RotatedApiKey', description: 'the key as the console shows it (never its secret) and when the previous secret stops working' },
);

/** The `data` of each event type: the object the matching GET returns (docs/api.md, "Events"). */
const DATA: Record<EventType, TSchema> = {
  'call.completed': CallSchema,
  'appointment.booked': AppointmentSchema,
  'appointment.updated': AppointmentSchema,
  'appointment.cancelled': AppointmentSchema,
  'customer.ready': ReadinessSchema,
  'balance.low': BalanceSchema,
  'key.rotated': RotatedKeySchema,
  'number.assigned': NumberSchema,
  'number.payment_due': NumberSchema,
  'number.released': NumberSchema,
  'website.ready': WebsiteSchema,
  'website.live': WebsiteSchema,
  'website.failed': WebsiteSchema,
  'website.hosting_due': WebsiteSchema,
  'website.suspended': WebsiteSchema,
};

/** `call.completed` → `CallCompletedEvent`. */
export const eventSchemaName = (type: string) => `${type.split(/[._]/).map((w) => w[0].toUpperCase() + w.slice(1)).join('')}Event`;

const envelope = (type: EventType) =>
  Type.Object(
    {
      id: Type.String({ maxLength: 64, description: 'evt_ + hex' }),
      object: Type.Literal('event'),
      type: Type.Literal(type),
      mode: ModeSchema,
      created_at: Timestamp,
      data: DATA[type],
    },
    { $id: eventSchemaName(type) },
  );

/**
 * An event: the envelope `GET /v1/events` lists and a webhook POSTs, one schema per `type` with
 * its `data` (the object the matching GET returns; balance.low's `low_balance` names the stage
 * crossed). A union discriminated by `type`.
 */
export const EventSchema = Type.Union(
  EVENT_TYPES.map((type) => envelope(type)),
  {
    $id: 'Event',
    discriminator: { propertyName: 'type', mapping: Object.fromEntries(EVENT_TYPES.map((t) => [t, `#/components/schemas/${eventSchemaName(t)}`])) },
    description: `an event, by type; data is the object the matching GET returns. ${ADDITIVE} (Skip an event of a type you do not know.)`,
  },
);

export const EventListSchema = Type.Object(
  { object: Type.Literal('list'), data: Type.Array(EventSchema, { maxItems: 200 }), has_more: Type.Boolean() },
  { $id: 'EventList' },
);
