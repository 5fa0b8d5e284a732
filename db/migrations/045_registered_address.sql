-- Issue 23: the business's postal address, said in the opening of a call to a UK number (PECR
-- reg. 24(1)(b): the caller's name and its address or a freephone number). Null: none; a call to a
-- UK number is then refused at POST /v1/calls (registered_address_required) unless the caller ID
-- is a UK freephone number (docs/compliance.md, "The opening").
ALTER TABLE customers ADD COLUMN registered_address text;
