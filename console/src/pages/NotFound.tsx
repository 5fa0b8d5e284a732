import { Link } from 'react-router';
import { PageHeader } from '../ui/Page.tsx';

export default function NotFound() {
  return (
    <>
      <PageHeader title="Page not found" />
      <p>
        There is no console page at this address. <Link to="/">Go to the overview</Link>.
      </p>
    </>
  );
}
