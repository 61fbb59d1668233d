-- The one definition of a staff user's permissions: the union over the user's roles, sorted
-- byte-wise. The login, the session cache's fill on a miss and API tokens all read it.
-- PL/pgSQL so its plan is kept for the life of the connection.
CREATE OR REPLACE FUNCTION public.user_permissions(p_user uuid)
 RETURNS text[]
 LANGUAGE plpgsql
 STABLE
AS $function$
begin
  return (select coalesce(array_agg(distinct p collate "C" order by p collate "C"), '{}')
    from roles r join staff_user_roles ur on ur.role_id = r.id, unnest(r.permissions) p
    where ur.staff_user_id = p_user);
end $function$;
